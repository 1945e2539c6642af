"""Dreamer's throughput: gradient steps/s (world model + actor-critic in imagination; for a set
that imagines from a subset of states, against imagining from all of them), env steps/s
of acting with the recurrent policy, the world model's training FLOP/s as a fraction of this
machine's dense matmul FLOP/s (measured in the same run), and what that makes a set's run take.

    python scripts/bench_dreamer.py [--sets=dreamer_v2_minatar,dreamer_v2_atari] [--steps=5]

FLOPs are counted by TensorFlow's profiler on the compiled world-model step's graph.
"""

import argparse
import time

import numpy as np

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import keras
import tensorflow as tf
from bench_world_model import count_flops, matmul_flops_per_second

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import frame_shape, make_batch_env, pixel_values
from rlkit.hparams import create_hparams
from rlkit.progress import format_duration
from rlkit.rl.learners.dreamer import DreamerAgent
from rlkit.rl.loops.dreamer import env_steps_per_update, sequence_length

try:
    from rlkit.rl.loops.dreamer import compute_dtype
except ImportError:  # a checkout before issue 64 (PYTHONPATH=CHECKOUT): float32 only
    compute_dtype = None

SETS = ["dreamer_v2_minatar", "dreamer_v2_atari"]
GAMES = {"dreamer_v2_minatar": "minatar/breakout", "dreamer_v2_atari": "pong", "dreamer_v3_minatar": "minatar/breakout"}


def random_batch(hparams, shape, rng):
    batch, length = hparams.world_model.batch_size, sequence_length(hparams)
    frames = (rng.random((batch, length) + shape) < 0.1).astype(np.uint8) * 255
    return dict(frames=tf.constant(frames), actions=tf.constant(rng.integers(3, size=(batch, length)), tf.int32),
                rewards=tf.zeros([batch, length]), ends=tf.zeros([batch, length], tf.int32),
                firsts=tf.constant(rng.random((batch, length)) < 0.02))


def build(set_name, overrides=""):
    """(hparams, its env, frame shape, a seeded DreamerAgent, a random training batch) of a set
    on its benchmark game."""
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name, ",".join(filter(None, [f"game={GAMES[set_name]}", overrides])))
    env = make_batch_env(hparams, hparams.num_envs)
    shape = frame_shape(hparams)
    dtype = {} if compute_dtype is None else dict(compute_dtype=compute_dtype(hparams))
    agent = DreamerAgent(hparams.actor_critic, hparams.world_model, shape, env.action_space, pixel_values(hparams),
                         seed=0, **dtype)
    return hparams, env, shape, agent, random_batch(hparams, shape, np.random.default_rng(0))


def bench(set_name, steps, acting_steps, overrides=""):
    hparams, env, shape, agent, batch = build(set_name, overrides)

    @tf.function
    def world_model_step(batch):
        with tf.GradientTape() as tape:
            loss, _, _ = agent.world_model.train_loss(batch)
        variables = agent.world_model.trainable_variables
        agent.model_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    start = time.perf_counter()
    agent.update(batch)  # builds and traces
    trace_seconds = time.perf_counter() - start
    world_model_step(batch)
    flops = count_flops(world_model_step.get_concrete_function(batch))
    timings = {}
    for name, step in (("update", agent.update), ("world_model", world_model_step)):
        start = time.perf_counter()
        for _ in range(steps):
            result = step(batch)
        tf.nest.map_structure(lambda t: t.numpy(), result)
        timings[name] = (time.perf_counter() - start) / steps

    stacked = FrameStack(env, 1)
    observation = stacked.reset(seed=0)
    agent.act(observation)
    start = time.perf_counter()
    for _ in range(acting_steps):
        observation, _ = stacked.step(agent.act(observation))
    env_step_seconds = (time.perf_counter() - start) / (acting_steps * env.num_envs)
    env.close()
    parameters = sum(int(tf.size(v)) for v in agent.world_model.trainable_variables)
    return dict(flops=flops, timings=timings, trace_seconds=trace_seconds, env_step_seconds=env_step_seconds,
                parameters=parameters, hparams=hparams)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--steps", type=int, default=5, help="timed gradient steps")
    parser.add_argument("--acting_steps", type=int, default=200, help="timed env steps")
    args = parser.parse_args()
    devices = ", ".join(d.device_type for d in tf.config.list_physical_devices())
    matmul = matmul_flops_per_second()
    print(f"devices: {devices}; dense matmul: {matmul / 1e9:.1f} GFLOP/s")
    for set_name in args.sets.split(","):
        r = bench(set_name, args.steps, args.acting_steps)
        hp, update, model = r["hparams"], r["timings"]["update"], r["timings"]["world_model"]
        achieved = r["flops"] / model
        updates = (hp.num_env_steps - hp.prefill_steps) / env_steps_per_update(hp)
        run_seconds = updates * update + hp.num_env_steps * r["env_step_seconds"]
        run_time = f"{run_seconds / 86400:,.0f} days" if run_seconds > 2 * 86400 else format_duration(run_seconds)
        print(f"{set_name} ({GAMES[set_name]}): world model {r['parameters'] / 1e6:.2f}M params; "
              f"{1 / update:.3g} gradient steps/s ({model / update:.0%} of it the world model; traced in "
              f"{r['trace_seconds']:.0f} s); world model {r['flops'] / 1e9:.2f} GFLOP/step, "
              f"{achieved / 1e9:.1f} GFLOP/s = {achieved / matmul:.0%} of matmul; acting {1 / r['env_step_seconds']:.0f} "
              f"env steps/s; {hp.num_env_steps:,} env steps with {updates:,.0f} gradient steps: about "
              f"{run_time}")
        if hp.actor_critic.imagine_starts:  # the baseline: imagination from every state (DreamerV2)
            every = bench(set_name, args.steps, 1, "actor_critic.imagine_starts=0")["timings"]["update"]
            print(f"  imagining from {hp.actor_critic.imagine_starts} states, not all: {1 / update:.3g} against "
                  f"{1 / every:.3g} gradient steps/s, {every / update:.2f}x")


if __name__ == "__main__":
    main()
