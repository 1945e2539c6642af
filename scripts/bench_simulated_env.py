"""PPO inside a SimPLe run's world model: the world model's env as it restarts its envs from
stored episodes, against the full scan of every stored episode it did at each restart before
FrameStore.chosen_episodes remembered its answers (the baseline, timed in the same run).

    python scripts/bench_simulated_env.py --run=RUNS/breakout/simple_ends_100k_s0 [--iterations=10] [--repeats=2]

RUN is a finished or running trainer_model_based output dir: its world model, its stored data
and its PPO settings. Blocks of --iterations PPO iterations (16 envs x 50 steps, each rollout
restarted from real frames, as the loop does) alternate between the two, --repeats times each;
the medians and their ratio are printed. The gap grows with the stored episodes: MinAtar games
that end at the first lost life store thousands.
"""

import argparse
import os
import time

import numpy as np


def scan_every_episode(store, epochs=None, min_length=1, from_start=False):
    """The baseline: chosen_episodes as it was, a pass over every stored episode per call."""
    return [i for i, e in enumerate(store.episodes)
            if len(e) >= min_length and not e.forgotten and (epochs is None or e.epoch in epochs)
            and (e.starts_at_reset or not from_start)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a trainer_model_based output dir")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import rlkit  # noqa: F401  (before TensorFlow: rlkit's CPU settings)
    import tensorflow as tf

    from rlkit.data_generators.batch_env import FrameStack
    from rlkit.data_generators.frame_store import FrameStore
    from rlkit.rl.learners.learner import build_learner
    from rlkit.rl.loops.on_policy import train_on_policy
    from rlkit.rl.loops.simulated_env import SimulatedBatchEnv
    from rlkit.rl.loops.world_model_training import load_loop_run

    hparams, action_space, meanings, model, store = load_loop_run(args.run)
    env = SimulatedBatchEnv(model, store, hparams.simulated_num_envs, action_space, meanings,
                            hparams.simulated_temperature)
    learner = build_learner(hparams, env.observation_space, action_space, 0)
    stacked = FrameStack(env, hparams.frame_stack_size)
    iterations, steps = tf.Variable(0, dtype=tf.int64), tf.Variable(0, dtype=tf.int64)
    writer = tf.summary.create_file_writer(os.path.join(os.environ.get("TMPDIR", "/tmp"), "bench_simulated_env"))

    def run_block():
        start = time.perf_counter()
        train_on_policy(learner, stacked, iterations, steps, int(iterations) + args.iterations, 10 ** 6, 0, writer,
                        restart_every_rollout=True)
        return time.perf_counter() - start

    run_block()  # traces the functions
    remembered = FrameStore.chosen_episodes
    seconds = {"scan per restart (baseline)": [], "remembered (rlkit)": []}
    for _ in range(args.repeats):
        for name, method in zip(seconds, (scan_every_episode, remembered)):
            FrameStore.chosen_episodes = method
            seconds[name].append(run_block())
    FrameStore.chosen_episodes = remembered
    print(f"{args.run}: {len(store.episodes):,} stored episodes, {store.num_steps:,} steps")
    for name, values in seconds.items():
        print(f"{name}: {np.median(values):.1f} s per {args.iterations} PPO iterations "
              f"({', '.join(f'{v:.1f}' for v in values)})")
    baseline, rlkit_seconds = (np.median(v) for v in seconds.values())
    print(f"ratio (baseline / rlkit): {baseline / rlkit_seconds:.2f}")


if __name__ == "__main__":
    main()
