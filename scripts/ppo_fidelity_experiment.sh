#!/usr/bin/env bash
# Does SimPLe's PPO (tensor2tensor's Adam 0.85/0.997/1e-6, minibatches of time steps, advantages
# normalised over the rollout) learn differently from the PPO the archived MinAtar runs used
# (Keras's Adam, shuffled sample minibatches, advantages normalised per minibatch)? Model-free
# PPO at 100K steps on the five MinAtar games, rlmf_minatar both ways, tuning seeds 100-109
# (docs/simple.md, "PPO as SimPLe ran it"; the finals in docs/results/ppo_fidelity.json).
#
#     bash scripts/ppo_fidelity_experiment.sh RUNS     # rerun to resume: finished runs are skipped
#
# Two runs at a time, one thread each (about 25 minutes on 2 cores).
set -euo pipefail
RUNS=${1:?usage: bash scripts/ppo_fidelity_experiment.sh RUNS}
PYTHON=${PYTHON:-python}
SIMPLE="ppo.adam_beta1=0.85,ppo.adam_beta2=0.997,ppo.adam_epsilon=1e-6,ppo.minibatch_time_steps=32,ppo.advantage_normalization=rollout"
export TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1
mkdir -p "$RUNS"
lane() {
  for game in breakout space_invaders freeway asterix seaquest; do
    for seed in "$@"; do
      for variant in keras simple; do
        extra=""; [ $variant = simple ] && extra=",$SIMPLE"
        out=$RUNS/${game}_${variant}_s$seed
        [ -f "$out/done" ] && continue
        $PYTHON -m rlkit.rl.trainer_model_free --hparams_set=rlmf_minatar --hparams=game=minatar/$game$extra \
          --seed=$seed --output_dir="$out" > "$out.log" 2>&1 && touch "$out/done"
      done
    done
  done
}
lane 100 102 104 106 108 &
lane 101 103 105 107 109 &
wait
