"""Where a Dreamer gradient step's time goes: each part of `DreamerAgent.update` timed alone as a
compiled function on the same batch, with its FLOPs (TensorFlow's profiler on its graph) and
FLOP/s against this machine's dense matmul measured in the same run; and what the loop adds
around the step (drawing a batch from the frame store, Python between steps).

    python scripts/profile_dreamer.py [--set=dreamer_v2_minatar] [--hparams=compute_dtype=bfloat16] [--steps=10]
    python scripts/profile_dreamer.py --ops [--set=...]     # the update's op time by op type instead

TensorFlow's threads are the loops' (`loops_threads`), and so the matmul's.

Parts (each includes what it needs before it, so the later ones are measured as differences):
world model forward (the loss), world model step (forward, backward, Adam), imagination
(the actor's horizon-step rollout in the prior, the heads and the slow critic: forward only),
actor step (imagination under a tape, the actor's loss, backward, Adam), critic step (its
regression on fixed features and returns), the whole update, and the loop's update (a batch
drawn from a frame store of random MinAtar play, then the update, then its metrics read).
"""

import argparse
import os
import sys
import time

import numpy as np

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dreamer import build  # noqa: E402
from bench_world_model import (count_flops, loops_threads, matmul_flops_per_second, op_times,  # noqa: E402
                               print_op_times, random_store)

from rlkit.rl.learners.dreamer import actor_loss  # noqa: E402
from rlkit.rl.loops.dreamer import sequence_length  # noqa: E402


def timed(function, args, steps):
    """(seconds per call, FLOPs per call) of a tf.function on `args`, after a traced warm-up call."""
    function(*args)
    flops = count_flops(function.get_concrete_function(*args))
    start = time.perf_counter()
    for _ in range(steps):
        result = function(*args)
    tf.nest.map_structure(lambda t: t.numpy(), result)
    return (time.perf_counter() - start) / steps, flops


def parts(agent, batch):
    """The update's parts as tf.functions of the batch (as DreamerAgent.update computes them)."""
    wm, hp = agent.world_model, agent.hparams

    def starts(hs, zs):
        start = (tf.reshape(hs, [-1, hs.shape[-1]]), tf.reshape(zs, [-1, wm.groups, wm.classes]))
        if hp.imagine_starts:
            chosen = tf.range(tf.minimum(hp.imagine_starts, tf.shape(start[0])[0]))
            start = tuple(tf.gather(part, chosen) for part in start)
        return start

    _, _, (hs, zs) = wm.train_loss(batch)
    start = starts(tf.stop_gradient(hs), tf.stop_gradient(zs))
    features, _, _, values, returns, weights = agent.imagined_returns(start)

    @tf.function
    def world_model_forward(batch):
        return wm.train_loss(batch)[0]

    @tf.function
    def world_model_step(batch):
        with tf.GradientTape() as tape:
            loss, _, _ = wm.train_loss(batch)
        variables = wm.trainable_variables
        agent.model_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    @tf.function
    def imagination(h, z):
        return agent.imagined_returns((h, z))[4]

    @tf.function
    def actor_step(h, z):
        with tf.GradientTape() as tape:
            _, log_probs, entropies, values, returns, weights = agent.imagined_returns((h, z))
            loss, _ = actor_loss(log_probs, entropies, returns, values[:-1], weights, 1.0 if agent.discrete else 0.0,
                                 hp.entropy_coef)
        variables = agent.actor.trainable_variables
        agent.actor_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    @tf.function
    def critic_step(features, returns, weights, values):
        with tf.GradientTape() as tape:
            loss, _ = agent.critic_objective(features, returns, weights, values)
        variables = agent.critic.trainable_variables
        agent.critic_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    h, z = start
    return [("world model forward", world_model_forward, (batch,)),
            ("world model step (forward, backward, Adam)", world_model_step, (batch,)),
            ("imagination (rollout, heads, slow critic)", imagination, (h, z)),
            ("actor step (imagination, loss, backward, Adam)", actor_step, (h, z)),
            ("critic step", critic_step, (features, returns, weights, values)),
            ("whole update", agent.update, (batch,))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="dreamer_v2_minatar")
    parser.add_argument("--hparams", default="", help="overrides of the set, such as compute_dtype=bfloat16")
    parser.add_argument("--steps", type=int, default=10, help="timed calls of each part")
    parser.add_argument("--ops", action="store_true", help="the update's op time by op type")
    args = parser.parse_args()
    loops_threads()
    if args.ops:
        _, _, _, agent, batch = build(args.set, args.hparams)
        print_op_times(f"{args.set}'s update", *op_times(lambda: agent.update(batch), args.steps))
        return
    matmul = matmul_flops_per_second()
    hparams, env, _, agent, batch = build(args.set, args.hparams)
    env.close()
    print(f"{args.set} ({hparams.get('compute_dtype', 'float32')}) on {hparams.game}: batch {hparams.world_model.batch_size} x {sequence_length(hparams)}, "
          f"imagination {hparams.actor_critic.horizon} steps from "
          f"{hparams.actor_critic.imagine_starts or 'every'} states; dense matmul {matmul / 1e9:.1f} GFLOP/s")
    rows = []
    for name, function, call_args in parts(agent, batch):
        seconds, flops = timed(function, call_args, args.steps)
        rows.append((name, seconds, flops))
    update = rows[-1][1]
    for name, seconds, flops in rows:
        print(f"  {name:<48} {seconds * 1e3:8.1f} ms  {seconds / update:5.0%} of the update  "
              f"{flops / 1e9:7.3f} GFLOP  {flops / seconds / 1e9:6.2f} GFLOP/s = {flops / seconds / matmul:4.0%} of matmul")

    store = random_store(hparams.game, 20_000)
    rng = np.random.default_rng(0)
    length = sequence_length(hparams)
    draws = 20
    start = time.perf_counter()
    for _ in range(draws):
        store.sequences(rng, hparams.world_model.batch_size, length)
    draw = (time.perf_counter() - start) / draws
    agent.update(store.sequences(rng, hparams.world_model.batch_size, length))  # traced for the store's fields
    start = time.perf_counter()
    for _ in range(args.steps):
        drawn = store.sequences(rng, hparams.world_model.batch_size, length)
        metrics = {k: float(v) for k, v in agent.update(drawn).items()}
    loop = (time.perf_counter() - start) / args.steps
    print(f"  {'drawing a batch from the frame store':<48} {draw * 1e3:8.1f} ms  {draw / update:5.0%} of the update")
    print(f"  {'the loop: draw, update, read the metrics':<48} {loop * 1e3:8.1f} ms  {loop / update:5.0%} of the update "
          f"({len(metrics)} metrics)")


if __name__ == "__main__":
    main()
