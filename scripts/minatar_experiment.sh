#!/usr/bin/env bash
# docs/results.md's experiment: SimPLe at 100K real steps, PPO at 100K and 1M, and a random
# policy on the five MinAtar games, one run per line below, all with the same evaluation
# (rlkit.hparams.env_sets.add_minatar_eval_hparams). Runs resume: rerun the script after a kill
# and finished runs are skipped. Then the table and the plots:
#
#   bash scripts/minatar_experiment.sh RUNS [GAME ...]     # GAMEs default to all five
#   python -m rlkit.rl.analysis.minatar_results --runs=RUNS --docs=docs
#
# Seeds (docs/results.md, "Protocol"): random and PPO@100K 10 on every game (minutes each); SimPLe 5 on
# Breakout and Freeway and 3 on the others; PPO@1M (the normalising reference) 3 on every game.
# SEEDS_<method>_<game> overrides one list, e.g. SEEDS_simple_seaquest="0 1".
# ONLY=model_free runs the random, PPO@100K and PPO@1M rows alone, ONLY=model_free_100k the random
# and PPO@100K rows, ONLY=simple the SimPLe rows, ONLY=dreamer the DreamerV2 rows (dreamer_v2_minatar,
# 3 seeds per game, RUNS/GAME/dreamer_100k_sS; about an hour each with a 2-core CPU to itself), which the
# full script runs last, in float32 as every Dreamer row (dreamer_float32 below; the archived
# row was made before compute_dtype, in float32); ONLY=dreamer_1m the DreamerV2 runs at 1M real steps on Breakout and Space
# Invaders (seed 0, RUNS/GAME/dreamer_1m_sS; an estimated 6-14 hours each on a 2-core CPU, so only when asked for), and
# ONLY=dreamer_v3_1m DreamerV3's fixed set the same way (RUNS/GAME/dreamer_v3_1m_sS);
# ONLY=dreamer_rewarded DreamerV2 with half of each batch's sequences holding a reward (not
# DreamerV2's: --hparams=rewarded_sequence_share=0.5) on the games whose rewards its replay
# rarely holds, Asterix and Freeway (3 seeds, RUNS/GAME/dreamer_rewarded_100k_sS).
# ONLY=simple_expected SimPLe as published whose world model's env hands out the reward head's mean
# (not SimPLe's: --loop_hparams=simulated_reward=expected) on Freeway, whose SimPLe seeds split
# (docs/results.md): 5 seeds, as SimPLe's own there (RUNS/freeway/simple_expected_100k_sS).
# ONLY=dqn the DQN rows (issue 66): rlmf_dqn_minatar_data_efficient at 100K (10 seeds, RUNS/GAME/dqn_100k_sS)
# and the MinAtar paper's DQN (rlmf_dqn_minatar) at 1M on Breakout and Space Invaders (3 seeds,
# RUNS/GAME/dqn_1m_sS); ONLY=dqn_100k the first alone, ONLY=dqn_1m the second.
# ONLY=dreamer_v3 the DreamerV3 rows (issue 67): dreamer_v3_minatar, fixed on tuning seeds (100 and up)
# before these runs, seeds 0-4 on every game (RUNS/GAME/dreamer_v3_100k_sS), in float32 (dreamer_float32).
# ONLY=simple_combined the one SimPLe set for every game (issue 68): rlmb_minatar_combined, seeds 0-4
# on Breakout and Freeway and 0-2 elsewhere (RUNS/GAME/simple_combined_100k_sS). Its tuning runs
# (seeds 100 and up) go in a RUNS of their own, which the results script is never given:
#   SEEDS_simple_combined_asterix=100 ONLY=simple_combined bash scripts/minatar_experiment.sh TUNING_RUNS asterix
# ONLY=long_eval evaluates each seed's final policy again on 2,048 episodes (below).
# LONG_EVAL_GAMES="asterix ...": each SimPLe or Dreamer run on these games is followed at once by
# that long evaluation of its final policy (the one ONLY=long_eval makes): the policy lives only
# on the machine that made the run, which a session does not always keep.
# SimPLe rows, each game's best set, listed in docs/results/simple_sets.txt (with its run directory,
# RUNS/GAME/PREFIX_sS): rlmb_minatar (SimPLe as published) on Freeway, whose episodes do not end
# early; on the four games that end at the first lost life, which SimPLe's model cannot show, sets
# whose world model also predicts episode ends. SIMPLE=faithful runs rlmb_minatar on every game.
# Every final evaluation (and the random policy's) plays 128 episodes per temperature.
# A run whose record docs/results/runs/GAME/RUN archives as finished (minatar_results.py) and whose
# directory is not under RUNS (a fresh machine) is skipped, so a new session starts only what the
# tables still lack; RERUN=1 runs it again. A rerun finished and kept in docs/results/pending (its cell's
# other seeds still to come) is skipped, RERUN or not. DRY_RUN=1 prints the commands that would run, and runs none.
# JOBS=N runs N at a time, each with TensorFlow on (cores / N) threads unless TF_NUM_INTRAOP_THREADS
# says otherwise (as Ray's trials in rlkit.rl.lab), its output in RUNS/GAME/RUN.log; Ctrl-C or SIGTERM stops them all (each run resumes on rerun).
# FINAL_EPISODES=N: every trained run's final evaluation plays N episodes (final_eval_batch_size=N),
# for the cells whose final evaluations the noise table finds short of the episodes it asks for.
# Run from a checkout of an older commit (cd there, then bash THIS_SCRIPT), the runs execute that
# commit's rlkit, as their provenance.json records:
#   cd OLD_CHECKOUT && FINAL_EPISODES=512 ONLY=dreamer RERUN=1 bash /path/to/main/scripts/minatar_experiment.sh RUNS freeway
# A seed's numbers repeat at the same thread count (docs/model_free.md), so JOBS changes them.
# JOBS=2 does 1.9-2x the training steps of JOBS=1 on 2 cores (scripts/bench_jobs.py, docs/benchmarks.md).
set -euo pipefail
# One block, read whole before it runs (bash reads a script as it goes): editing this file while
# an experiment runs changes nothing under way.
{
runs=${1:?usage: bash scripts/minatar_experiment.sh RUNS_DIR [GAME ...]}
shift
games=("$@")
[ ${#games[@]} -gt 0 ] || games=(breakout freeway asterix seaquest space_invaders)
python=${PYTHON:-python}
repo=$(cd "$(dirname "$0")/.." && pwd)
archive=${ARCHIVE:-$repo/docs/results/runs}
pending=$(dirname "$archive")/pending  # reruns waiting for their cell's other seeds, beside the archive
simple_sets=$repo/docs/results/simple_sets.txt
jobs_at_once=${JOBS:-1}
[[ "$jobs_at_once" =~ ^[1-9][0-9]*$ ]] || { echo "JOBS=$jobs_at_once: give how many runs at a time, 1 or more" >&2; exit 2; }
[[ "${FINAL_EPISODES:-1}" =~ ^[1-9][0-9]*$ ]] || {
  echo "FINAL_EPISODES=$FINAL_EPISODES: give how many episodes each final evaluation plays, 1 or more" >&2; exit 2; }
final_episodes=${FINAL_EPISODES:+,final_eval_batch_size=$FINAL_EPISODES}  # after every trained run's game
threads=$(( $(nproc) / jobs_at_once )); [ "$threads" -ge 1 ] || threads=1
started=() logs=() running_now=

now() {  # now COMMAND...: runs COMMAND to its end, or with DRY_RUN prints it
  if [ -n "${DRY_RUN:-}" ]; then echo "$*"; return; fi
  # Started in the background and waited for: bash runs a trap only after a foreground command
  # ends, so a SIGTERM to the script reached a foreground run only when it had finished.
  "$@" &
  running_now=$!
  wait "$running_now"
  running_now=
}

# From the first run on, no command substitutions ($(...), <(...)): bash 5.2 fails a Ctrl-C trap
# that lands in one ("unexpected EOF while looking for matching `)'"), leaving the runs going.
launch() {  # launch RUN_DIR COMMAND...: runs COMMAND unless the archive (or, RERUN or not, pending) holds it finished
  local run_dir=$1 game_dir=${1%/*}
  local name=${game_dir##*/}/${run_dir##*/}
  local record="$archive/$name/run_info.json" pending_record="$pending/$name/run_info.json"
  shift
  if [ -z "${RERUN:-}" ] && [ ! -d "$run_dir" ] && grep -q '"finished": true' "$record" 2>/dev/null; then
    echo "skipped $run_dir: archived as finished ($record)" >&2
  elif [ ! -d "$run_dir" ] && grep -q '"finished": true' "$pending_record" 2>/dev/null; then
    # A rerun kept as pending is this command's own product, waiting for its cell's other seeds
    # (minatar_results --pending): running it again would cost hours for the same record.
    echo "skipped $run_dir: finished and kept as pending ($pending_record; remove it to run it again)" >&2
  elif [ -z "${DRY_RUN:-}" ] && [ "$jobs_at_once" -gt 1 ]; then
    while count_running; [ "$running" -ge "$jobs_at_once" ]; do wait -n || true; done
    mkdir -p "$game_dir"
    echo "started $name (log: $run_dir.log)" >&2
    TF_NUM_INTRAOP_THREADS=${TF_NUM_INTRAOP_THREADS:-$threads} TF_NUM_INTEROP_THREADS=${TF_NUM_INTEROP_THREADS:-1} \
      "$@" >> "$run_dir.log" 2>&1 &
    started+=($!) logs+=("$run_dir.log")
  else
    now "$@"
  fi
}

count_running() {  # sets running: how many of the started runs are still going
  local pid
  running=0
  for pid in "${started[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then (( ++running )); fi
  done
}

long_eval_episodes=${LONG_EVAL_EPISODES:-2048}
evaluate_long() {  # evaluate_long RUN_DIR SEED: its final policy at temperature 1, into RUNS/GAME/long_eval/RUN
  local run=$1 seed=$2 game_dir=${1%/*}
  now $python -m rlkit.rl.evaluator --policy_dir="$run/policy" --seed="$seed" \
    --hparams="eval_batch_size=$long_eval_episodes,eval_sampling_temps=[1.0]" --eval_metrics_dir="$game_dir/long_eval/${run##*/}"
}

# then_long_eval RUN_DIR SEED COMMAND...: COMMAND (a loop run), then, once it has ended well, its
# long evaluation unless one is there. Started as a run is (in the background, in a subshell of its
# own, where the script's traps do not hold): a stop is passed on to what it is running.
then_long_eval() {
  local run=$1 seed=$2; shift 2
  trap 'kill -TERM ${!:-} 2>/dev/null; wait; exit 143' TERM
  "$@" &
  wait $! || return
  [ -f "${run%/*}/long_eval/${run##*/}/summary.json" ] || evaluate_long "$run" "$seed"
}
with_long_eval=()
long_eval_after() {  # long_eval_after GAME RUN_DIR SEED: sets with_long_eval, the prefix of a run's command
  with_long_eval=()
  case " ${LONG_EVAL_GAMES:-} " in *" $1 "*) with_long_eval=(then_long_eval "$2" "$3") ;; esac
}

# Runs started in the background ignore Ctrl-C (bash does that without job control): pass the stop on.
stop_runs() {
  [ ${#started[@]} -eq 0 ] || kill -TERM "${started[@]}" 2>/dev/null || true
  [ -z "${running_now:-}" ] || kill -TERM "$running_now" 2>/dev/null || true
  wait
  echo "stopped; rerun the same command to resume the runs" >&2
  exit "$1"
}
trap 'stop_runs 130' INT
trap 'stop_runs 143' TERM

ppo_1m_hparams=",num_env_steps=1000000,eval_every_iterations=50"  # PPO@1M: rlmf_minatar's PPO for 1M steps
dqn_1m_hparams=",num_env_steps=1000000,eval_every_steps=102400"  # DQN@1M: the MinAtar paper's DQN for 1M steps
# Every Dreamer row computes in float32: the sets' compute_dtype=auto would take bfloat16 on a CPU
# with it and float32 elsewhere, and a cell's seeds run on whichever machine a session has.
dreamer_float32=",compute_dtype=float32"
dreamer_1m_hparams=",num_env_steps=1000000$dreamer_float32"  # DreamerV2 and V3 at 1M: each fixed set for 1M steps
# The protocol: each method's seeds by game. rlkit.rl.analysis.protocol reads it from this script's
# dry run, so docs/results.md's Status counts the archive against these lists.
seeds() {  # seeds METHOD GAME: sets seed_list, the seeds of one method on one game
  local method=$1 game=$2 var="SEEDS_$1_$2" default
  case $method in
    model_free) default="0 1 2 3 4 5 6 7 8 9" ;;
    ppo_1m) default="0 1 2" ;;
    simple) default="0 1 2"; case $game in breakout|freeway) default="0 1 2 3 4" ;; esac ;;
    dreamer) default="0 1 2" ;;
    dreamer_v3) default="0 1 2 3 4" ;;
    simple_combined) default="0 1 2"; case $game in breakout|freeway) default="0 1 2 3 4" ;; esac ;;
    dqn) default="0 1 2 3 4 5 6 7 8 9" ;;
    dqn_1m) default=""; case $game in breakout|space_invaders) default="0 1 2" ;; esac ;;
    dreamer_1m|dreamer_v3_1m) default=""; case $game in breakout|space_invaders) default="0" ;; esac ;;
    dreamer_rewarded) default=""; case $game in asterix|freeway) default="0 1 2" ;; esac ;;
    simple_expected) default=""; case $game in freeway) default="0 1 2 3 4" ;; esac ;;
  esac
  seed_list=${!var:-$default}
}

simple_set() {  # simple_set GAME: sets set_name and run (the directory prefix) from $simple_sets
  local listed
  while read -r listed set_name run; do
    [ "$listed" != "$1" ] || return 0
  done < "$simple_sets"
  echo "no SimPLe set for $1 in $simple_sets: games are breakout freeway asterix seaquest space_invaders" >&2
  exit 1
}

for game in "${games[@]}"; do
  dir="$runs/$game"
  if [ -z "${ONLY:-}" ] || [ "${ONLY#model_free}" != "${ONLY:-}" ]; then
    seeds model_free "$game"
    for seed in $seed_list; do
      # A random policy: the evaluation alone.
      [ -f "$dir/random_s$seed/summary.json" ] || launch "$dir/random_s$seed" $python -m rlkit.rl.evaluator --agent=random \
        --hparams_set=rlmf_minatar --hparams="game=minatar/$game" --seed="$seed" --eval_metrics_dir="$dir/random_s$seed"
      launch "$dir/ppo_100k_s$seed" $python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_minatar \
        --hparams="game=minatar/$game$final_episodes" --seed="$seed" --output_dir="$dir/ppo_100k_s$seed"
    done
    if [ "${ONLY:-}" != model_free_100k ]; then
      seeds ppo_1m "$game"
      for seed in $seed_list; do
        launch "$dir/ppo_1m_s$seed" $python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_minatar \
          --hparams="game=minatar/$game$ppo_1m_hparams$final_episodes" --seed="$seed" --output_dir="$dir/ppo_1m_s$seed"
      done
    fi
  fi
  if [ -z "${ONLY:-}" ] || [ "${ONLY#dqn}" != "${ONLY:-}" ]; then
    if [ "${ONLY:-}" != dqn_1m ]; then
      seeds dqn "$game"
      for seed in $seed_list; do
        launch "$dir/dqn_100k_s$seed" $python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_dqn_minatar_data_efficient \
          --hparams="game=minatar/$game$final_episodes" --seed="$seed" --output_dir="$dir/dqn_100k_s$seed"
      done
    fi
    if [ "${ONLY:-}" != dqn_100k ]; then
      seeds dqn_1m "$game"
      for seed in $seed_list; do
        launch "$dir/dqn_1m_s$seed" $python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_dqn_minatar \
          --hparams="game=minatar/$game$dqn_1m_hparams$final_episodes" --seed="$seed" --output_dir="$dir/dqn_1m_s$seed"
      done
    fi
  fi
  if [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = simple ]; then
    # Each game's best SimPLe set so far (docs/results.md, "The archive": which SimPLe).
    simple_set "$game"
    if [ "${SIMPLE:-}" = faithful ]; then set_name=rlmb_minatar run=simple_100k; fi
    seeds simple "$game"
    for seed in $seed_list; do
      long_eval_after "$game" "$dir/${run}_s$seed" "$seed"
      launch "$dir/${run}_s$seed" "${with_long_eval[@]}" $python -m rlkit.rl.trainer_model_based --loop_hparams_set=$set_name \
        --loop_hparams="game=minatar/$game$final_episodes" --seed="$seed" --output_dir="$dir/${run}_s$seed"
    done
  fi
done
# The model-based rows run game after game: loop_rows METHOD PREFIX SET [HPARAMS [FLAG]] runs SET
# (with ,HPARAMS after the game) on every game and seed of METHOD, into RUNS/GAME/PREFIX_sSEED;
# FLAG is the trainer's flag prefix, loop_hparams for SimPLe's sets as SimPLe named it.
loop_rows() {
  local method=$1 prefix=$2 set_name=$3 extra=${4:-} flag=${5:-hparams}
  for game in "${games[@]}"; do
    seeds "$method" "$game"
    for seed in $seed_list; do
      long_eval_after "$game" "$runs/$game/${prefix}_s$seed" "$seed"
      launch "$runs/$game/${prefix}_s$seed" "${with_long_eval[@]}" $python -m rlkit.rl.trainer_model_based \
        --${flag}_set=$set_name --$flag="game=minatar/$game$extra$final_episodes" \
        --seed="$seed" --output_dir="$runs/$game/${prefix}_s$seed"
    done
  done
}
# DreamerV2 after every game's other rows: the longest runs come last.
if [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = dreamer ]; then loop_rows dreamer dreamer_100k dreamer_v2_minatar "$dreamer_float32"; fi
case "${ONLY:-}" in
  dreamer_v3) loop_rows dreamer_v3 dreamer_v3_100k dreamer_v3_minatar "$dreamer_float32" ;;
  simple_combined) loop_rows simple_combined simple_combined_100k rlmb_minatar_combined "" loop_hparams ;;
  dreamer_rewarded) loop_rows dreamer_rewarded dreamer_rewarded_100k dreamer_v2_minatar ",rewarded_sequence_share=0.5$dreamer_float32" ;;
  simple_expected) loop_rows simple_expected simple_expected_100k rlmb_minatar ,simulated_reward=expected loop_hparams ;;
  dreamer_1m) loop_rows dreamer_1m dreamer_1m dreamer_v2_minatar "$dreamer_1m_hparams" ;;
  dreamer_v3_1m) loop_rows dreamer_v3_1m dreamer_v3_1m dreamer_v3_minatar "$dreamer_1m_hparams" ;;
esac
if [ "${ONLY:-}" = long_eval ]; then
  # Evaluation noise against seed noise: each seed's final policy evaluated again on
  # LONG_EVAL_EPISODES episodes (2,048) at temperature 1, into RUNS/GAME/long_eval/RUN (beside the
  # run, whose own evaluation events it would otherwise double); minatar_results archives its
  # summary.json as the run's long_eval.json and sets the seeds' spread at 128 episodes against
  # the long evaluation's. LONG_EVAL_METHODS picks the methods (random ppo_100k ppo_1m simple
  # dreamer_100k; simple: each game's SimPLe set; dreamer_v3_100k and simple_combined only where
  # named). A PPO run is trained first (rerun where it is not here: same seed, same numbers on the
  # same machine); a SimPLe or Dreamer run, hours long, only where its directory is here. One at a
  # time, minutes each.
  long_evaluation() {  # long_evaluation GAME RUN_NAME SEED [PPO HPARAMS]: unless archived or done here
    local game=$1 name=$2 seed=$3 more=${4:-}
    local run="$runs/$game/${name}_s$seed" long="$runs/$game/long_eval/${name}_s$seed"
    if [ -z "${RERUN:-}" ] && [ -f "$archive/$game/${name}_s$seed/long_eval.json" ]; then
      echo "skipped $run: its long evaluation is archived" >&2; return
    fi
    if [ -f "$pending/$game/${name}_s$seed/long_eval.json" ]; then  # RERUN or not, as launch does
      echo "skipped $run: its long evaluation is kept as pending" >&2; return
    fi
    [ ! -f "$long/summary.json" ] || return 0  # done here, not archived yet
    case $name in
      random)
        now $python -m rlkit.rl.evaluator --agent=random --hparams_set=rlmf_minatar --seed="$seed" \
          --hparams="game=minatar/$game,eval_batch_size=$long_eval_episodes,eval_sampling_temps=[1.0]" --eval_metrics_dir="$long"
        return ;;
      ppo_*)
        now $python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_minatar --hparams="game=minatar/$game$more" \
          --seed="$seed" --output_dir="$run" ;;
      *)
        if [ ! -d "$run/policy" ]; then echo "skipped $run: not on this machine (its policy is needed)" >&2; return; fi ;;
    esac
    evaluate_long "$run" "$seed"
  }
  every_seed() {  # every_seed SEEDS_OF GAME RUN_NAME [PPO HPARAMS]: long_evaluation of each seed `seeds` lists
    seeds "$1" "$2"
    for seed in $seed_list; do long_evaluation "$2" "$3" "$seed" "${4:-}"; done
  }
  for game in "${games[@]}"; do
    for method in ${LONG_EVAL_METHODS:-random ppo_100k ppo_1m simple dreamer_100k}; do
      case $method in
        random|ppo_100k) every_seed model_free "$game" $method ;;
        ppo_1m) every_seed ppo_1m "$game" ppo_1m "$ppo_1m_hparams" ;;
        simple) simple_set "$game"; every_seed simple "$game" "$run" ;;
        dreamer_100k) every_seed dreamer "$game" dreamer_100k ;;
        dreamer_v3_100k) every_seed dreamer_v3 "$game" dreamer_v3_100k ;;
        simple_combined) every_seed simple_combined "$game" simple_combined_100k ;;
        *) echo "LONG_EVAL_METHODS=$method: methods are random ppo_100k ppo_1m simple dreamer_100k dreamer_v3_100k simple_combined" >&2
          exit 2 ;;
      esac
    done
  done
fi
failed=()
for i in "${!started[@]}"; do wait "${started[$i]}" || failed+=("${logs[$i]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  echo "${#failed[@]} of ${#started[@]} runs failed; the end of each log says why: ${failed[*]}" >&2
  exit 1
fi
exit 0
}
