"""Where SimPLe's MinAtar loop spends a step: the world model's training step, the simulated env's
batched step, the policy's act, a rollout in the world model (step by step, and as the one call
the loop makes where the checkout has it), PPO's update of one rollout and a whole PPO iteration
inside the world model, each timed on its own with its FLOPs (TensorFlow's profiler on its graph) and the
FLOP/s that makes against a dense matmul measured in the same run.

    python scripts/profile_simple.py [--set=rlmb_minatar_ends] [--game=minatar/breakout] [--steps=20]
    python scripts/profile_simple.py --ops        # the world model's training step's op time by op type

The world model is untrained (its speed does not depend on its weights) and the simulated env
starts from a store of random play, as the loop's first epoch does.
"""

import argparse
import os
import sys
import time

import numpy as np

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_world_model import (count_flops, loops_threads, matmul_flops_per_second, op_times,  # noqa: E402
                               print_op_times, random_store)

from rlkit.data_generators.batch_env import FrameStack  # noqa: E402
from rlkit.data_generators.make_env import frame_shape, make_batch_env, pixel_values  # noqa: E402
from rlkit.hparams import create_hparams  # noqa: E402
from rlkit.rl.learners.learner import build_learner  # noqa: E402
from rlkit.rl.loops.rollout import collect_rollout  # noqa: E402
from rlkit.rl.loops.simulated_env import SimulatedBatchEnv  # noqa: E402
from rlkit.rl.loops.world_model_training import window_input_fn, world_model_estimator  # noqa: E402


def seconds_per_call(call, steps):
    call()
    start = time.perf_counter()
    for _ in range(steps):
        result = call()
    tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, result)
    return (time.perf_counter() - start) / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="rlmb_minatar_ends")
    parser.add_argument("--game", default="minatar/breakout")
    parser.add_argument("--steps", type=int, default=20, help="timed calls of each part")
    parser.add_argument("--ops", action="store_true", help="the world model's training step's op time by op type")
    args = parser.parse_args()
    loops_threads()
    matmul = matmul_flops_per_second()
    hparams = create_hparams(args.set, f"game={args.game}")
    store = random_store(hparams.game, 20_000)
    env = make_batch_env(hparams, 1)
    shape, values = frame_shape(hparams), pixel_values(hparams)
    estimator = world_model_estimator(hparams.world_model, os.path.join(store.data_dir, "wm"), shape,
                                      int(env.action_space.n), values)
    dataset = iter(window_input_fn(store, hparams.world_model, 0)())
    batch = next(dataset)
    estimator.train(lambda: tf.data.Dataset.from_tensors(batch).repeat(), max_steps=1)  # builds and traces
    if args.ops:
        print_op_times(f"{args.set}'s world-model training step", *op_times(lambda: estimator._train_step(batch),
                                                                             args.steps))
        return
    rows = [("world model training step", seconds_per_call(lambda: estimator._train_step(batch), args.steps),
             count_flops(estimator._train_step.get_concrete_function(batch)))]
    rows.append(("  drawing its batch of windows", seconds_per_call(lambda: next(dataset), args.steps), 0))

    simulated = SimulatedBatchEnv(estimator.model, store, hparams.simulated_num_envs, env.action_space)
    stacked = FrameStack(simulated, hparams.frame_stack_size)
    learner = build_learner(hparams, simulated.observation_space, env.action_space, seed=0)
    observation = stacked.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = lambda: rng.integers(env.action_space.n, size=simulated.num_envs)  # noqa: E731
    rows.append(("simulated env step (16 envs)", seconds_per_call(lambda: stacked.step(actions()), args.steps), 0))
    rows.append(("policy act (16 envs)", seconds_per_call(lambda: learner.act_for_rollout(observation), args.steps), 0))
    rollout_length = learner.hparams.rollout_length

    def python_rollout():
        return collect_rollout(stacked, stacked.reset(seed=1), learner.act_for_rollout, rollout_length)[0]

    # The loop's rollout: one TensorFlow call where this checkout has it (SimulatedBatchEnv.compiled_rollout).
    compiled = getattr(simulated, "compiled_rollout", None)
    loop_rollout = python_rollout if compiled is None else (
        lambda: compiled(learner.policy, hparams.frame_stack_size, rollout_length, 1)[0])

    def iteration():
        rollout = loop_rollout()
        rollout.restarted = True
        return rollout, learner.update(rollout)

    rollout, _ = iteration()
    repeats = max(3, args.steps // 4)
    rows.append(("a rollout, step by step in Python", seconds_per_call(python_rollout, repeats), 0))
    if compiled is not None:
        rows.append(("the rollout as one call (compiled_rollout)", seconds_per_call(loop_rollout, repeats), 0))
    rows.append(("PPO update of one rollout", seconds_per_call(lambda: learner.update(rollout), repeats), 0))
    rows.append(("a PPO iteration in the world model", seconds_per_call(iteration, repeats), 0))
    env.close()
    print(f"{args.set} on {hparams.game}: world model {hparams.world_model.model}, batch "
          f"{hparams.world_model.batch_size}; {hparams.simulated_num_envs} simulated envs x {rollout_length} steps "
          f"per PPO iteration; dense matmul {matmul / 1e9:.1f} GFLOP/s")
    for name, seconds, flops in rows:
        rate = f"  {flops / 1e9:6.3f} GFLOP  {flops / seconds / matmul:4.0%} of matmul" if flops else ""
        print(f"  {name:<40} {seconds * 1e3:8.1f} ms{rate}")


if __name__ == "__main__":
    main()
