#!/usr/bin/env bash
# NAF's reported runs (issue 66), the sets as registered, on seeds no choice saw: rlmf_naf_pendulum
# on seeds 0-4 and rlmf_naf_mountaincar on seeds 0-2; then each run's greedy evaluations.
#
#     bash scripts/naf_experiment.sh RUNS          # rerun to resume (finished runs are skipped)
#
# One run at a time, one thread each (Pendulum about 3 minutes a run here, MountainCar about 10).
set -euo pipefail
RUNS=${1:?usage: bash scripts/naf_experiment.sh RUNS}
PYTHON=${PYTHON:-python}
export TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1
mkdir -p "$RUNS"
runs=()
for seed in ${MOUNTAINCAR_SEEDS:-0 1 2}; do runs+=("rlmf_naf_mountaincar $seed"); done
for seed in ${PENDULUM_SEEDS:-0 1 2 3 4}; do runs+=("rlmf_naf_pendulum $seed"); done
for run in "${runs[@]}"; do
  read -r set_name seed <<< "$run"
  out=$RUNS/${set_name}_s$seed
  [ -f "$out/done" ] && continue
  $PYTHON -m rlkit.rl.trainer_model_free --hparams_set="$set_name" --seed="$seed" --output_dir="$out" \
    >> "$out.log" 2>&1 && touch "$out/done"
done
$PYTHON - "$RUNS" <<'PYTHON'
import glob, os, sys
from rlkit.rl.experiments.curves import read_scalar
for run in sorted(glob.glob(os.path.join(sys.argv[1], "rlmf_naf_*_s*"))):
    if os.path.isdir(run):
        steps, returns = read_scalar(os.path.join(run, "eval"), "mean_reward/eval/sampling_temp_0.0_max_noops_0_unclipped")
        print(os.path.basename(run), " ".join(f"{s}:{r:.1f}" for s, r in zip(steps, returns)))
PYTHON
