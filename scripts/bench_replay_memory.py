"""The replay memory's size on real Atari: random Pong at the Nature DQN's 84x84 grayscale,
appended through `ReplayMemory` (shards written to disk as in training), then measured.

    python scripts/bench_replay_memory.py [--steps=200000] [--replay_dir=DIR]

Prints, at every eighth of the steps: transitions, bytes of compressed frames in memory, the
process's RSS growth since the memory was opened and per step since the last report, bytes on
disk, and batch-32 samples/s. Then the bytes per stored step, and 1M steps at the median growth
per step between reports (one-time jumps, the allocator taking buffers, are printed apart), next
to the 7,056 bytes of each raw frame (and a replay that stores each observation and next
observation, 4 frames each, uncompressed: 56,448 bytes per transition).
"""

import argparse
import resource
import subprocess
import tempfile
import time

import rlkit  # noqa: F401  (before TensorFlow: rlkit's settings)
import numpy as np

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import make_batch_env
from rlkit.data_generators.replay import ReplayMemory
from rlkit.hparams import create_hparams

HPARAMS = create_hparams("rlmf_dqn_nature", "game=pong,num_envs=8")
RAW_FRAME = 84 * 84


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def disk_bytes(path):
    return int(subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout.split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--replay_dir", default=None)
    args = parser.parse_args()
    replay_dir = args.replay_dir or tempfile.mkdtemp()
    env = FrameStack(make_batch_env(HPARAMS, HPARAMS.num_envs), HPARAMS.frame_stack_size)
    rng = np.random.default_rng(0)
    start_rss = rss_bytes()
    replay = ReplayMemory(replay_dir, HPARAMS.num_envs, HPARAMS.frame_stack_size, 1_000_000, 1000)
    observation = env.reset(seed=0)
    steps, report_every = 0, args.steps // 8
    previous_rss, previous_steps, marginal = start_rss, 0, []
    print("steps  transitions  frames in memory  RSS growth  per step since last  on disk  samples/s (batch 32)")
    while steps < args.steps:
        actions = rng.integers(env.env.action_space.n, size=HPARAMS.num_envs)
        next_observation, step = env.step(actions)
        replay.add(observation[:, -1], actions, step)
        observation, steps = next_observation, steps + HPARAMS.num_envs
        if steps % report_every < HPARAMS.num_envs:
            replay.flush()
            begin = time.perf_counter()
            for _ in range(50):
                replay.sample(rng, 32)
            rate = 50 * 32 / (time.perf_counter() - begin)
            rss = rss_bytes()
            marginal.append((rss - previous_rss) / (replay.num_steps - previous_steps))
            previous_rss, previous_steps = rss, replay.num_steps
            print(f"{steps:>7,}  {len(replay):>11,}  {replay.store.compressed_bytes / 2**20:>12.1f} MiB"
                  f"  {(rss - start_rss) / 2**20:>7.1f} MiB  {marginal[-1]:>13,.0f} B"
                  f"  {disk_bytes(replay_dir) / 2**20:>5.1f} MiB  {rate:>9,.0f}", flush=True)
    per_frame = replay.store.compressed_bytes / replay.num_steps
    typical = float(np.median(marginal))
    print(f"per stored step: {per_frame:.0f} bytes of compressed frame (raw {RAW_FRAME}), {typical:.0f} bytes of "
          f"RSS growth (median between reports), {disk_bytes(replay_dir) / replay.num_steps:.0f} on disk")
    print(f"1M steps at that rate: {typical * 1e6 / 2**30:.2f} GiB of memory, plus the one-time growth seen here "
          f"({(rss_bytes() - start_rss - typical * replay.num_steps) / 2**20:.0f} MiB); raw frames alone: "
          f"{RAW_FRAME * 1e6 / 2**30:.2f} GiB; both stacks of every transition uncompressed: {56_448 * 1e6 / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
