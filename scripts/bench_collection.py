"""Real-env collection throughput with the envs in this process and on Ray actors, in one run.

    python scripts/bench_collection.py [--game=pong] [--num_envs=16] [--steps=200] [--workers=2]

Measures agent steps/s of the two collections the trainers make, each first with
real_num_workers=0 (the baseline: the envs here) and then on --workers Ray actors:

  storage   the SimPLe loop's collection into data shards with the policy acting
            (collect_experience; the loop's collection=policy)
  rollouts  the on-policy loop's rollouts with PPO acting (what trainer_model_free and the loop's
            collection=learner train on), without the updates

The policy is rlmb_base's PPO network, untrained. Ray's start and the actors' first step (their
TensorFlow import and network build) are left out: a warm-up collection runs first. Prints the
ratios against the baseline.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags, logging  # noqa: E402

import rlkit  # noqa: E402,F401  (TensorFlow starts with rlkit's settings)
from rlkit.data_generators.batch_env import FrameStack  # noqa: E402
from rlkit.data_generators.experience import collect_experience  # noqa: E402
from rlkit.data_generators.make_env import make_batch_env  # noqa: E402
from rlkit.hparams import create_hparams  # noqa: E402
from rlkit.rl.learners.learner import build_learner  # noqa: E402
from rlkit.rl.loops.rollout import collect_rollout  # noqa: E402
from rlkit.rl.loops.workers import start_workers  # noqa: E402

flags.DEFINE_string("game", "pong", "The game.")
flags.DEFINE_integer("num_envs", 16, "Real envs in all (rlmb_base's real_num_envs).")
flags.DEFINE_integer("steps", 200, "Agent steps per env in each measurement.")
flags.DEFINE_integer("workers", 2, "Ray actors of the second measurement.")
FLAGS = flags.FLAGS


def measure(hparams, workers, learner, env):
    """(storage steps/s, rollout steps/s) with `workers` (None: the envs in `env`)."""
    steps = FLAGS.steps * FLAGS.num_envs
    results = []
    with tempfile.TemporaryDirectory() as data_dir:
        for epoch in (0, 1):  # epoch 0 warms up (the actors' first weights, TensorFlow's first call)
            start = time.perf_counter()
            steps_from = (lambda seed: workers.steps(seed)) if workers else None
            collect_experience(env, data_dir, epoch, steps if epoch else 2 * FLAGS.num_envs, FLAGS.steps, seed=epoch,
                               act=learner.act, frame_stack_size=hparams.frame_stack_size, steps_from=steps_from)
        results.append(steps / (time.perf_counter() - start))
    stacked = FrameStack(env, hparams.frame_stack_size)
    for warm_up in (True, False):
        start = time.perf_counter()
        length = 2 if warm_up else FLAGS.steps
        if workers:
            workers.collect_rollout(length, reset_seed=0)
        else:
            collect_rollout(stacked, stacked.reset(seed=0), learner.act_for_rollout, length)
    results.append(steps / (time.perf_counter() - start))
    return results


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)
    hparams = create_hparams("rlmb_base", f"game={FLAGS.game}")
    rows = []
    with make_batch_env(hparams, FLAGS.num_envs) as env:
        learner = build_learner(hparams, env.observation_space, env.action_space, seed=0)
        rows.append(("0 (this process)", measure(hparams, None, learner, env)))
        hparams.real_num_workers = FLAGS.workers
        workers = start_workers(hparams, learner, FLAGS.num_envs, seed=0)
        try:
            rows.append((f"{FLAGS.workers} Ray actors", measure(hparams, workers, learner, env)))
        finally:
            workers.close()
    base = rows[0][1]
    print(f"{FLAGS.game}, {FLAGS.num_envs} envs, {FLAGS.steps} steps per env, PPO acting ({os.cpu_count()} CPUs)")
    print(f"{'workers':<18}{'storage steps/s':>18}{'ratio':>8}{'rollout steps/s':>18}{'ratio':>8}")
    for name, (storage_rate, rollout_rate) in rows:
        print(f"{name:<18}{storage_rate:>18.1f}{storage_rate / base[0]:>8.2f}{rollout_rate:>18.1f}"
              f"{rollout_rate / base[1]:>8.2f}")


if __name__ == "__main__":
    app.run(main)
