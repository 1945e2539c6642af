"""SimPLe loop costs, measured in one run on this machine:

* agent steps/s of the world model's env (SimulatedBatchEnv) at batch 16, for the tiny and the
  full-size stochastic discrete model (random weights: the cost does not depend on them);
* agent steps/s of real Atari (rlkit's batched ale-py env, 16 envs), as the baseline;
* ms per simulated frame / ms per real agent step: SimPLe reported ~32 ms vs ~0.4 ms (80x) on a P100;
* the wall time of one rlmb_tiny epoch, split by stage (from the loop's eval_metrics/epoch_0.json).

    python scripts/bench_simple.py [--sets=next_frame_basic_stochastic_discrete_tiny,...] [--steps=20]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import keras
import numpy as np
import tensorflow as tf

from rlkit.data_generators.atari import AtariBatchEnv
from rlkit.data_generators.experience import collect_experience
from rlkit.data_generators.frame_store import FrameStore
from rlkit.hparams import create_hparams
from rlkit.models.registry import get_model
from rlkit.rl.loops.simulated_env import SimulatedBatchEnv

SETS = ["next_frame_basic_stochastic_discrete_tiny", "next_frame_basic_stochastic_discrete"]
NUM_ENVS = 16


def real_pong_store():
    """A few hundred steps of real Pong: the windows simulated rollouts start from."""
    data_dir = os.path.join(tempfile.mkdtemp(), "data")
    with AtariBatchEnv("pong", 2) as env:
        collect_experience(env, data_dir, 0, 400, 200, seed=0)
    return FrameStore(data_dir)


def steps_per_second(env, steps):
    """Agent steps (over all envs) per second of random play, after one warm-up step."""
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.step(rng.integers(env.action_space.n, size=env.num_envs))
    start = time.perf_counter()
    for _ in range(steps):
        env.step(rng.integers(env.action_space.n, size=env.num_envs))
    return steps * env.num_envs / (time.perf_counter() - start)


def simulated_steps_per_second(set_name, store, steps):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name)
    action_space = AtariBatchEnv("pong", 1).action_space
    model = get_model(hparams.model)(hparams, (105, 80, 3), int(action_space.n), 256)
    env = SimulatedBatchEnv(model, store, NUM_ENVS, action_space)
    return steps_per_second(env, steps), sum(int(tf.size(v)) for v in model.trainable_variables)


def tiny_epoch_stage_seconds():
    """Runs one rlmb_tiny epoch through the command line; its stage times and total wall time."""
    out = tempfile.mkdtemp()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rlkit.rl.trainer_model_based", "--loop_hparams_set=rlmb_tiny",
                    "--loop_hparams=epochs=1", f"--output_dir={out}"], check=True, capture_output=True)
    wall = time.perf_counter() - start
    with open(os.path.join(out, "eval_metrics", "epoch_0.json")) as f:
        return json.load(f)["stage_seconds"], wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--steps", type=int, default=20, help="timed batched steps per env kind")
    args = parser.parse_args()
    devices = ", ".join(d.device_type for d in tf.config.list_physical_devices())
    print(f"devices: {devices}; batch {NUM_ENVS}")
    with AtariBatchEnv("pong", NUM_ENVS) as real_env:
        real = steps_per_second(real_env, max(args.steps, 200))
    real_ms = 1e3 / real
    print(f"real Pong (AtariBatchEnv x{NUM_ENVS}): {real:,.0f} agent steps/s = {real_ms:.3f} ms/step")
    store = real_pong_store()
    for set_name in args.sets.split(","):
        simulated, params = simulated_steps_per_second(set_name, store, args.steps)
        simulated_ms = 1e3 / simulated
        print(f"simulated, {set_name} ({params / 1e6:.2f}M params): {simulated:,.1f} agent steps/s = "
              f"{simulated_ms:.2f} ms/frame = {simulated_ms / real_ms:,.0f}x a real step (SimPLe on a P100: 80x)")
    stages, wall = tiny_epoch_stage_seconds()
    split = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in stages.items())
    print(f"one rlmb_tiny epoch: {wall:.1f} s wall for the command (TensorFlow start-up included); {split}")


if __name__ == "__main__":
    main()
