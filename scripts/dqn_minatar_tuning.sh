#!/usr/bin/env bash
# Tuning a data-efficient DQN set for MinAtar at 100K steps (issue 66), on tuning seeds only
# (100 and up: no reported run uses them). Variants of rlmf_dqn_minatar (the MinAtar paper's DQN):
#   paper    as it is: replay 100K, 5K random steps, an update every step, target every 1K,
#            RMSProp 2.5e-4, epsilon 1 -> 0.1 over 100K steps
#   de       Double + dueling + 3-step returns, epsilon 1 -> 0.01 over 20K steps, learning from 1,600
#   de_per   de with prioritized replay (alpha 0.6, beta 0.4 -> 1)
#   de_n10   de with 10-step returns (Freeway: the crossing's reward reaches further back)
#   de_slow  de exploring longer: epsilon 1 -> 0.01 over 50K steps (Freeway: more crossings seen)
#
#     bash scripts/dqn_minatar_tuning.sh RUNS [SEEDS]    # default seeds "100 101"; rerun to resume
#     GAMES=freeway VARIANTS="de_n10 de_slow" LANES=1 bash scripts/dqn_minatar_tuning.sh RUNS
#
# LANES runs at a time (default 2), one thread each (about 4 minutes a run on this project's
# 2-core machine).
set -euo pipefail
RUNS=${1:?usage: bash scripts/dqn_minatar_tuning.sh RUNS [SEEDS]}
SEEDS=${2:-100 101}
PYTHON=${PYTHON:-python}
GAMES=${GAMES:-breakout space_invaders asterix seaquest freeway}
LANES=${LANES:-2}
declare -A SETTINGS=(
  [paper]=""
  [de]="dqn.double=True,dqn.dueling=True,dqn.n_step=3,dqn.epsilon_final=0.01,dqn.epsilon_decay_steps=20000,dqn.learning_starts=1600"
  [de_per]="dqn.double=True,dqn.dueling=True,dqn.n_step=3,dqn.epsilon_final=0.01,dqn.epsilon_decay_steps=20000,dqn.learning_starts=1600,dqn.prioritized=True"
  [de_n10]="dqn.double=True,dqn.dueling=True,dqn.n_step=10,dqn.epsilon_final=0.01,dqn.epsilon_decay_steps=20000,dqn.learning_starts=1600"
  [de_slow]="dqn.double=True,dqn.dueling=True,dqn.n_step=3,dqn.epsilon_final=0.01,dqn.epsilon_decay_steps=50000,dqn.learning_starts=1600"
)
VARIANTS=${VARIANTS:-paper de de_per}
export TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1
mkdir -p "$RUNS"
jobs=()
for seed in $SEEDS; do
  for game in $GAMES; do
    for variant in $VARIANTS; do
      jobs+=("$game $variant $seed")
    done
  done
done
lane() {  # every LANES-th job, from $1
  for ((i = $1; i < ${#jobs[@]}; i += LANES)); do
    read -r game variant seed <<< "${jobs[$i]}"
    out=$RUNS/${game}_${variant}_s$seed
    [ -f "$out/done" ] && continue
    extra=${SETTINGS[$variant]}
    $PYTHON -m rlkit.rl.trainer_model_free --hparams_set=rlmf_dqn_minatar \
      --hparams=game=minatar/$game${extra:+,$extra} --seed=$seed --output_dir="$out" > "$out.log" 2>&1 \
      && touch "$out/done"
  done
}
for ((lane_index = 0; lane_index < LANES; lane_index++)); do
  lane $lane_index &
done
wait
