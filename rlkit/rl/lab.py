"""The lab: a named set run in a mode, as SLM-Lab runs a spec.

    python -m rlkit.rl.lab --hparams_set=rlmf_a2c_cartpole --mode=train --output_dir=DIR
    python -m rlkit.rl.lab --mode=enjoy --output_dir=DIR [--video_dir=VIDEOS] [--episodes=3]
    python -m rlkit.rl.lab --hparams_set=rlmb_minatar --mode=dev --output_dir=DEV_DIR

Modes:
  train   trains from scratch, or resumes, as the set says: `trainer_model_based` for a SimPLe
          loop set (one with a world model), `trainer_model_free` otherwise. Then draws the
          session graphs into DIR/graphs/ with a summary.json (rlkit.rl.experiments.session_graphs).
  enjoy   loads the run's policy (policy/best where there is one, else the newest; --policy)
          and plays --episodes episodes on the real env in a pygame window (Q or Esc stops), or
          records them as MP4s into --video_dir with no window; prints each episode's return.
  dev     the set shrunk for debugging (`dev_version`: one env, a few hundred steps, summaries
          and evaluations every few iterations), then trained as in train mode. The set is not
          edited: the run's hparams.json holds what ran, run.json says it was a dev run, and only
          --mode=dev resumes it.
  search  a hyperparameter search on Ray Tune: --num_trials runs of the set with values drawn
          from the ranged set --ranges, stopped early by ASHA, --max_concurrent at once, each in
          DIR/trials/trial_K; then DIR/search.md, search.png and best/ (rlkit.rl.experiments.search).
  benchmark   the set on every game of --games and --seeds seeds as Ray tasks, each in
          DIR/runs/<game>/seed_S; then DIR/benchmark.md and benchmark.json (rlkit.rl.experiments.benchmark).

search and benchmark start Ray on this machine, or join the cluster at --ray_address; rerunning
either resumes it. They need `pip install -e ".[ray]"`.
"""

import functools

import numpy as np
from absl import flags, logging

from rlkit import cli, gcs
from rlkit.data_generators.make_env import make_batch_env
from rlkit.display import require_display
from rlkit.errors import UserError, run_command
from rlkit.rl.experiments.enjoy import Recorder, Window, choose_policy, enjoy
from rlkit.hparams import dev_version
from rlkit.rl.experiments.runs import check_set, gin_spec, train
from rlkit.rl.loops import dreamer, finished, model_free, simple

# The trainers and the policy export import TensorFlow (about 5 s): the modes import them when
# they start, so a mistake in the flags is reported in well under a second.

MODES = ("train", "enjoy", "dev", "search", "benchmark")


def enjoy_run(FLAGS):  # noqa: N803
    """--mode=enjoy: the run's policy played in a window or recorded, its returns printed."""
    from rlkit.rl.learners.policy_export import load_policy

    if not FLAGS.output_dir:
        raise UserError("--mode=enjoy needs --output_dir (the run to play)")
    if not FLAGS.video_dir:
        require_display("--video_dir=DIR records the episodes as MP4s instead")
    run_dir = gcs.local_input(FLAGS.output_dir)
    if cli.find_saved_hparams(run_dir) is None:
        raise UserError(f"no rlkit run in {FLAGS.output_dir!r} (no {cli.HPARAMS_FILE}): train one with --mode=train")
    hparams = cli.load_hparams(FLAGS, run_dirs=[run_dir])
    policy_path = choose_policy(run_dir, FLAGS.policy)
    with make_batch_env(hparams, 1) as env:
        space, observation_shape = env.observation_space, (hparams.frame_stack_size,) + env.observation_shape
        act = load_policy(policy_path, observation_shape, env.action_space, space.dtype)
    max_steps = FLAGS.max_steps or hparams.get("eval_step_limit", 27_000)
    logging.info("Playing %s on %s at temperature %g", policy_path, hparams.game, FLAGS.temperature)
    if FLAGS.video_dir:
        with gcs.local_output(FLAGS.video_dir) as video_dir:
            recorder = Recorder(video_dir, f"enjoy_{hparams.game.replace('/', '_')}", FLAGS.fps)
            episodes = []
            for episode in range(FLAGS.episodes):  # one MP4 per episode
                episodes += enjoy(hparams, act, 1, FLAGS.temperature, FLAGS.seed + episode, recorder, max_steps)
                recorder.end_episode()
        logging.info("Wrote %d videos to %s", len(recorder.paths), FLAGS.video_dir)
    else:
        episodes = enjoy(hparams, act, FLAGS.episodes, FLAGS.temperature, FLAGS.seed,
                         Window(f"rlkit enjoy: {hparams.game}", FLAGS.fps), max_steps)
    returns = [total for total, _ in episodes]
    print(f"mean return {np.mean(returns):g} over {len(returns)} episode(s)", flush=True)


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags(None, "Run directory: what train and dev write, what enjoy plays.")
    flags.DEFINE_enum("mode", "train", MODES, "What to do with the set.")
    flags.DEFINE_integer("episodes", 3, "enjoy: episodes to play.")
    flags.DEFINE_string("video_dir", None, "enjoy: record MP4s here instead of opening a window.")
    flags.DEFINE_enum("policy", "best", ["best", "last"], "enjoy: the best evaluated policy, or the newest.")
    flags.DEFINE_float("temperature", 1.0, "enjoy: sampling temperature (0 greedy; 1 the policy's own sampling).")
    flags.DEFINE_integer("max_steps", None, "enjoy: agent steps per episode at most (default: eval_step_limit).")
    flags.DEFINE_integer("fps", 30, "enjoy: frames per second of the window and the videos.")
    flags.DEFINE_string("ranges", None, "search: the ranged set (python -m rlkit.hparams --list_ranges).")
    flags.DEFINE_integer("num_trials", 8, "search: how many trials.")
    flags.DEFINE_integer("max_concurrent", 2, "search, benchmark: runs at once.")
    flags.DEFINE_float("grace_fraction", 0.25, "search: ASHA's first rung, as a share of a run's real env steps.")
    flags.DEFINE_string("games", None, "benchmark: games, comma-separated (atari100k: its 26 games).")
    flags.DEFINE_integer("seeds", 3, "benchmark: seeds per game (0, 1, ...).")
    flags.DEFINE_integer("cpus_per_trial", 1, "search, benchmark: CPUs Ray reserves for each run.")
    flags.DEFINE_string("ray_address", None, "search, benchmark: a Ray cluster to join (e.g. HEAD_IP:6379); "
                        "default: start Ray on this machine.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if FLAGS.mode in ("search", "benchmark"):
        cli.parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)  # checked here, parsed again by each run
        gin_config = gin_spec(FLAGS.gin_files, FLAGS.gin_bindings)
        if not FLAGS.output_dir:
            raise UserError(f"--mode={FLAGS.mode} needs --output_dir (where its runs and tables go)")
        if gcs.is_remote(FLAGS.output_dir):
            raise UserError(f"--mode={FLAGS.mode} writes to a local (or cluster-shared) dir, not {FLAGS.output_dir!r}")
        if FLAGS.mode == "search":
            from rlkit.rl.experiments.search import search
            search(FLAGS.hparams_set, FLAGS.hparams, FLAGS.ranges, FLAGS.num_trials, FLAGS.max_concurrent,
                   FLAGS.output_dir, FLAGS.seed, FLAGS.ray_address, FLAGS.cpus_per_trial, FLAGS.grace_fraction,
                   gin_config)
        else:
            from rlkit.rl.experiments.benchmark import benchmark
            benchmark(FLAGS.hparams_set, FLAGS.hparams, FLAGS.games, FLAGS.seeds, FLAGS.output_dir,
                      FLAGS.max_concurrent, FLAGS.ray_address, FLAGS.cpus_per_trial, gin_config)
        return
    if FLAGS.mode == "enjoy":
        enjoy_run(FLAGS)
        return
    variant = ("dev", dev_version) if FLAGS.mode == "dev" else None
    done = functools.partial(finished, among=(model_free, simple, dreamer))  # a finished run's rerun: its graphs only
    with cli.start_run(FLAGS, check=check_set, variant=variant, finished=done) as (hparams, output_dir):
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    run_command(main)
