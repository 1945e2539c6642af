"""The lab: a named set run in a mode, as SLM-Lab runs a spec.

    python -m rlkit.rl.lab --hparams_set=rlmf_a2c_cartpole --mode=train --output_dir=DIR
    python -m rlkit.rl.lab --mode=enjoy --output_dir=DIR [--video_dir=VIDEOS] [--episodes=3]
    python -m rlkit.rl.lab --hparams_set=rlmb_minatar --mode=dev --output_dir=DEV_DIR

Modes:
  train   trains from scratch, or resumes, as the set says: `trainer_model_based` for a SimPLe
          loop set (one with a world model), `trainer_model_free` otherwise. Then draws the
          session graphs into DIR/graphs/ with a summary.json (rlkit.rl.session_graphs).
  enjoy   loads the run's policy (policy/best where there is one, else the newest; --policy)
          and plays --episodes episodes on the real env in a pygame window (Q or Esc stops), or
          records them as MP4s into --video_dir with no window; prints each episode's return.
  dev     the set shrunk for debugging (`dev_version`: one env, a few hundred steps, summaries
          and evaluations every few iterations), then trained as in train mode. The set is not
          edited: the run's hparams.json holds what ran, run.json says it was a dev run, and only
          --mode=dev resumes it.
  search  a hyperparameter search on Ray Tune: --num_trials runs of the set with values drawn
          from the ranged set --ranges, stopped early by ASHA, --max_concurrent at once, each in
          DIR/trials/trial_K; then DIR/search.md, search.png and best/ (rlkit.rl.search).
  benchmark   the set on every game of --games and --seeds seeds as Ray tasks, each in
          DIR/runs/<game>/seed_S; then DIR/benchmark.md and benchmark.json (rlkit.rl.benchmark).

search and benchmark start Ray on this machine, or join the cluster at --ray_address; rerunning
either resumes it. They need `pip install -e ".[ray]"`.
"""

import json
import os
import shlex
import time

import gin
import numpy as np
from absl import flags, logging

from rlkit import cli, gcs
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import is_image_game, make_batch_env
from rlkit.display import require_display
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.hparams import HParams
from rlkit.rl.rollout import newest_pictures
from rlkit.video import display_frame, text_strip, upscale, write_mp4

# The trainers and the policy export import TensorFlow (about 5 s): the modes import them when
# they start, so a mistake in the flags is reported in well under a second.

MODES = ("train", "enjoy", "dev", "search", "benchmark")
DEV_STEPS = 400  # real agent steps of a model-free dev run


def is_loop_set(hparams):
    """Whether `hparams` describe a SimPLe loop run (they hold a world model)."""
    return "world_model" in hparams


def _shrink(hparams, name, value):
    """Sets `name` to at most `value`, where `hparams` has it."""
    if name in hparams and not isinstance(hparams.get(name), HParams):
        current = hparams.get(name)
        setattr(hparams, name, type(current)(min(current, value)) if isinstance(current, (int, float)) else value)


def dev_version(hparams):
    """`hparams` shrunk for debugging: one env, a few hundred real steps (two short epochs of the
    loop), an update, checkpoint, summary and evaluation every few iterations, one short
    evaluation episode per setting. Network sizes and learning values stay as the set has them."""
    hparams = hparams.copy()
    learner = hparams.get(hparams.base_algo)
    for name in ("num_envs", "real_num_envs", "eval_batch_size"):
        _shrink(hparams, name, 1)
    _shrink(hparams, "eval_step_limit", 100)
    _shrink(hparams, "keep_checkpoints", 2)
    if learner is not None:
        _shrink(learner, "rollout_length", 32)
        _shrink(learner, "num_minibatches", 1)
        for name, value in (("learning_starts", 100), ("target_update_period", 100), ("epsilon_decay_steps", 200),
                            ("replay_capacity", 10_000), ("exploration_noise_decay_steps", 200)):
            _shrink(learner, name, value)
    if is_loop_set(hparams):
        hparams.epochs = 2
        hparams.num_real_env_steps = 2 * 100
        hparams.real_rollout_length = min(hparams.real_rollout_length, 10)
        hparams.longer_training_epochs = []
        for name, value in (("simulated_num_envs", 2), ("simulated_ppo_iterations", 4), ("shard_steps", 50),
                            ("simulated_steps_per_epoch", 200), ("simulated_rollout_length", 10),
                            ("checkpoint_every_iterations", 2), ("reward_accuracy_rollouts", 4)):
            _shrink(hparams, name, value)
        hparams.reward_accuracy_lengths = [min(n, 12) for n in hparams.reward_accuracy_lengths]
        for name, value in (("train_steps", 50), ("batch_size", 2), ("save_checkpoints_steps", 25),
                            ("save_summary_steps", 5)):
            _shrink(hparams.world_model, name, value)
    elif learner is not None and learner.get("replay_capacity") is not None:  # off-policy
        hparams.num_env_steps = min(hparams.num_env_steps, DEV_STEPS)
        for name, value in (("shard_steps", 50), ("eval_every_steps", 100), ("log_every_steps", 10)):
            _shrink(hparams, name, value)
    else:  # on-policy
        iterations = 8
        hparams.num_env_steps = min(hparams.num_env_steps, iterations * hparams.num_envs * learner.rollout_length)
        for name, value in (("checkpoint_every_iterations", 2), ("eval_every_iterations", 4)):
            _shrink(hparams, name, value)
    return hparams


def check_set(hparams):
    """What the chosen trainer checks before writing anything."""
    if is_loop_set(hparams):
        from rlkit.rl import trainer_model_based
        trainer_model_based.check_names(hparams)
    else:
        from rlkit.rl import trainer_model_free
        trainer_model_free.check_names(hparams)


def real_step_budget(hparams):
    """The real env steps a run of `hparams` takes in all (a loop's first collection included)."""
    if is_loop_set(hparams):
        from rlkit.rl.trainer_model_based import steps_per_collection
        return steps_per_collection(hparams) * (hparams.epochs + 1)
    return hparams.num_env_steps


def train(hparams, output_dir, seed, on_evaluation=None):
    """Trains (or resumes) as the set says, then draws the session graphs; returns the summary.
    on_evaluation(real env steps, main return) hears of each evaluation (a search's reports)."""
    from rlkit.rl import session_graphs, trainer_model_based, trainer_model_free

    start = time.monotonic()
    trainer = trainer_model_based if is_loop_set(hparams) else trainer_model_free
    trainer.train(hparams, output_dir, seed, on_evaluation)
    summary = session_graphs.write_session_graphs(output_dir, hparams)
    if summary is None:
        logging.warning("No evaluation in %s yet: no session graphs", output_dir)
        return None
    logging.info("Session graphs in %s: final return %.4g, best %.4g at %s real env steps, %s (this process: %.0f s)",
                 os.path.join(output_dir, "graphs"), summary["final_return"], summary["best_return"],
                 f"{summary['best_step']:,}", "solved at " + f"{summary['steps_to_solved']:,} steps"
                 if summary["steps_to_solved"] is not None else "not solved" if summary["solved_return"] is not None
                 else "no solved_return in the set", time.monotonic() - start)
    return summary


def check_spec(output_dir, spec_file, spec, kind):
    """Writes the spec of a search or benchmark (`kind`) in `output_dir` on its first start; a
    rerun must ask for the same one, which it then resumes."""
    path = os.path.join(output_dir, spec_file)
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        changed = [f"{k}: {saved.get(k)!r} there, {spec[k]!r} now" for k in sorted(spec) if saved.get(k) != spec[k]]
        if changed:
            raise UserError(f"{output_dir!r} holds another {kind} ({', '.join(changed[:3])}): rerun it with its own "
                            "flags to resume it, or choose a new --output_dir")
        return
    os.makedirs(output_dir, exist_ok=True)
    atomic_write_text(path, json.dumps(spec, indent=2) + "\n")


def gin_spec(gin_files, gin_bindings):
    """The gin config a search or benchmark hands its runs: its files (absolute paths, read by
    the Ray workers: local, or on a disk the cluster shares) and bindings; {} without any."""
    return {name: list(values) for name, values in (("gin_files", [os.path.abspath(p) for p in gin_files]),
                                                    ("gin_bindings", gin_bindings)) if values}


def rerun_command(set_name, overrides, seed, run_dir, gin_files=(), gin_bindings=()):
    """The command that trains (or resumes) the run in `run_dir` by itself."""
    gin_flags = "".join(f" --gin_files={shlex.quote(path)}" for path in gin_files) + "".join(
        f" --gin_bindings={shlex.quote(binding)}" for binding in gin_bindings)
    return (f"python -m rlkit.rl.lab --mode=train --hparams_set={set_name} --hparams={overrides} --seed={seed} "
            f"--output_dir={run_dir}{gin_flags}")


def train_in_dir(run_dir, set_name, overrides, seed, on_evaluation=None, cpus=1, gin_files=(), gin_bindings=()):
    """The set with `overrides` and the gin config trained (or resumed) in `run_dir` as
    `--mode=train` would, by a search trial or a benchmark run in a Ray worker: saved as any run
    (its command.txt says how to rerun it alone), its log in RUN/log.txt, TensorFlow on the
    `cpus` Ray reserved for it. Returns the session summary (None without an evaluation)."""
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(cpus))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    gin.clear_config()  # a Ray worker may have run another trial before this one
    cli.parse_gin(gin_files, gin_bindings)
    hparams = cli.run_hparams(run_dir, set_name, True, overrides)
    check_set(hparams)
    cli.save_run(run_dir, hparams, set_name, overrides,
                 command=rerun_command(set_name, overrides, seed, run_dir, gin_files, gin_bindings))
    with cli.log_to_file(os.path.join(run_dir, "log.txt")):
        return train(hparams, run_dir, seed, on_evaluation)


def choose_policy(run_dir, which):
    """The SavedModel dir enjoy plays: policy/best (which="best", where the run kept one) or the
    newest export (which="last": policy/, or a loop run's newest policy/epoch_K)."""
    from rlkit.rl.policy_export import find_policies

    policy_dir = os.path.join(run_dir, "policy")
    best = os.path.join(policy_dir, "best")
    if which == "best" and os.path.exists(os.path.join(best, "saved_model.pb")):
        return best
    if not os.path.isdir(policy_dir):
        raise UserError(f"no policy/ in {run_dir!r}: train the run first (--mode=train)")
    return find_policies(policy_dir, all_epochs=False)[-1][1]


def picture(env, observation, zoom):
    """What a person sees of env 0: the env's own drawing, or its newest frame enlarged."""
    return upscale(display_frame(newest_pictures(env, observation, 1)[0]), zoom)


def enjoy(hparams, act, num_episodes, temperature, seed, show, max_steps, zoom=2):
    """Plays `num_episodes` episodes on one real env with `act(observations, temperature)`;
    `show(frame) -> keep going?` sees every frame, headed with the episode, step and return.
    Returns [(return, length)] of the episodes played (a stopped one included)."""
    episodes = []
    with make_batch_env(hparams, 1, render=not is_image_game(hparams.game)) as batch_env:
        env = FrameStack(batch_env, hparams.frame_stack_size)
        for episode in range(num_episodes):
            observation = env.reset(seed=seed + episode)
            total, length, keep_going = 0.0, 0, True
            while length < max_steps:
                image = picture(env, observation, zoom)
                header = text_strip([f"episode {episode + 1}/{num_episodes} | step {length} | return {total:g}"],
                                    image.shape[1], max(1, zoom // 2))
                if not show(np.concatenate([header, image], axis=0)):
                    keep_going = False
                    break
                observation, step = env.step(act(observation, temperature))
                total += float(step.raw_reward[0])
                length += 1
                if step.done[0]:
                    break
            episodes.append((total, length))
            print(f"episode {episode + 1}/{num_episodes}: return {total:g} over {length} steps"
                  + ("" if keep_going else " (stopped)"), flush=True)
            if not keep_going:
                break
    return episodes


class Window:
    """A pygame window showing frames at `fps`; calling it with a frame returns False once the
    user closed the window or pressed Q or Esc."""

    def __init__(self, caption, fps):
        self.caption, self.fps = caption, fps
        self.screen = self.clock = None

    def __call__(self, frame):
        import pygame

        from rlkit.display import open_window

        if self.screen is None or self.screen.get_size() != (frame.shape[1], frame.shape[0]):
            self.screen = open_window(frame.shape[1], frame.shape[0], self.caption)
            self.clock = pygame.time.Clock()
        for event in pygame.event.get():
            if event.type == pygame.QUIT or (event.type == pygame.KEYDOWN and event.key in (pygame.K_q, pygame.K_ESCAPE)):
                return False
        pygame.surfarray.blit_array(self.screen, frame.transpose(1, 0, 2))
        pygame.display.flip()
        self.clock.tick(self.fps)
        return True


class Recorder:
    """Collects frames into one MP4 per episode in `video_dir`."""

    def __init__(self, video_dir, name, fps):
        self.video_dir, self.name, self.fps = video_dir, name, fps
        self.frames, self.paths = [], []

    def __call__(self, frame):
        self.frames.append(frame)
        return True

    def end_episode(self):
        if self.frames:
            path = os.path.join(self.video_dir, f"{self.name}_episode_{len(self.paths) + 1}.mp4")
            write_mp4(path, self.frames, fps=self.fps)
            self.paths.append(path)
            self.frames = []


def enjoy_run(FLAGS):  # noqa: N803
    """--mode=enjoy: the run's policy played in a window or recorded, its returns printed."""
    from rlkit.rl.policy_export import load_policy

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
            from rlkit.rl.search import search
            search(FLAGS.hparams_set, FLAGS.hparams, FLAGS.ranges, FLAGS.num_trials, FLAGS.max_concurrent,
                   FLAGS.output_dir, FLAGS.seed, FLAGS.ray_address, FLAGS.cpus_per_trial, FLAGS.grace_fraction,
                   gin_config)
        else:
            from rlkit.rl.benchmark import benchmark
            benchmark(FLAGS.hparams_set, FLAGS.hparams, FLAGS.games, FLAGS.seeds, FLAGS.output_dir,
                      FLAGS.max_concurrent, FLAGS.ray_address, FLAGS.cpus_per_trial, gin_config)
        return
    if FLAGS.mode == "enjoy":
        enjoy_run(FLAGS)
        return
    variant = ("dev", dev_version) if FLAGS.mode == "dev" else None
    with cli.start_run(FLAGS, check=check_set, variant=variant) as (hparams, output_dir):
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    cli.run(main)
