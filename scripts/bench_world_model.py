"""World-model throughput: training steps/s, inference frames/s at batch 16, and achieved FLOP/s
as a fraction of this machine's dense matmul FLOP/s, all measured in one run.

    python scripts/bench_world_model.py [--sets=next_frame_basic_stochastic_discrete_tiny,...] [--steps=3]

FLOPs are counted by TensorFlow's profiler on the compiled training step's graph.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import keras
import tensorflow as tf
from tensorflow.python.profiler import model_analyzer, option_builder

from rlkit.hparams import create_hparams
from rlkit.models.estimator import Estimator

SETS = ["next_frame_basic_stochastic_discrete_tiny", "next_frame_basic_stochastic_discrete"]


def loops_threads():
    """The model-based loops' TensorFlow threads (rlkit.rl.loops.threads), before any op runs; a
    checkout from before issue 64 (PYTHONPATH=CHECKOUT) has none and keeps TensorFlow's defaults."""
    try:
        from rlkit.rl.loops.threads import one_thread_per_op
    except ImportError:
        return
    one_thread_per_op()


def matmul_flops_per_second(size=2048, repeats=10):
    """The machine's dense float32 matmul FLOP/s: two independent matmuls per call, so that
    every core works whether TensorFlow splits each op over the cores (its default) or runs ops
    side by side on one thread each (the model-based loops' `one_thread_per_op`)."""
    a, b, c, d = (tf.random.normal([size, size]) for _ in range(4))
    matmul = tf.function(lambda: tf.matmul(a, b) + tf.matmul(c, d))
    matmul().numpy()
    start = time.perf_counter()
    for _ in range(repeats):
        result = matmul()
    result.numpy()
    return repeats * 2 * 2 * size ** 3 / (time.perf_counter() - start)


def random_store(game, steps):
    """A FrameStore of `steps` random steps of `game` (collect_random)."""
    from rlkit.data_generators.frame_store import FrameStore

    out = tempfile.mkdtemp()
    subprocess.run([sys.executable, "-m", "rlkit.rl.collect", "--hparams_set=collect_random",
                    f"--hparams=game={game},num_agent_steps={steps}", f"--output_dir={out}"], check=True,
                   capture_output=True)
    return FrameStore(os.path.join(out, "data"))


PONG_FRAMES, PONG_ACTIONS = (105, 80, 3), 6


def fake_batch(hparams, batch_size):
    length = hparams.num_context_frames + hparams.num_target_frames
    shape = (batch_size, length) + PONG_FRAMES
    return dict(frames=tf.cast(tf.random.uniform(shape, 0, 256, tf.int32), tf.uint8),
                actions=tf.zeros([batch_size, length], tf.int32),
                rewards=tf.zeros([batch_size, length], tf.int32))


def count_flops(concrete_function):
    options = option_builder.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    return model_analyzer.profile(concrete_function.graph, options=options).total_float_ops


def op_times(call, steps):
    """(wall seconds per call, {op type: seconds per call}, {op type: kernels per call}) of a
    compiled `call()`: TensorFlow's profiler traces `steps` calls after two untimed ones, and
    its kernels' durations are summed by op type over every thread (so with ops running side by
    side on the inter-op threads the sum is more than the wall time)."""
    import collections
    import glob

    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    for _ in range(2):
        call()  # traced, and its first calls' allocations done
    logdir = tempfile.mkdtemp()
    tf.profiler.experimental.start(logdir)
    start = time.perf_counter()
    for _ in range(steps):
        result = call()
    tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, result)
    wall = (time.perf_counter() - start) / steps
    tf.profiler.experimental.stop()
    space = xplane_pb2.XSpace()
    with open(glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)[0], "rb") as trace:
        space.ParseFromString(trace.read())
    seconds, kernels = collections.Counter(), collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name  # "scope/op:OpType" for a kernel
                if ":" in name and not name.startswith(("ExecutorState", "KernelAndDevice", "EagerLocal")):
                    op_type = name.rsplit(":", 1)[1]
                    seconds[op_type] += event.duration_ps * 1e-12 / steps
                    kernels[op_type] += 1 / steps
    return wall, seconds, kernels


def print_op_times(what, wall, seconds, kernels, rows=20):
    total = sum(seconds.values())
    print(f"{what}: {wall * 1e3:.1f} ms a call, {total * 1e3:.1f} ms of op time over the threads")
    for op_type, time_in in seconds.most_common(rows):
        print(f"  {op_type:<40} {time_in * 1e3:7.2f} ms  {time_in / total:5.1%}  {kernels[op_type]:6.0f} kernels")


def bench(set_name, steps):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(set_name)
    batch = fake_batch(hparams, hparams.batch_size)
    estimator = Estimator(hparams.model, hparams, tempfile.mkdtemp(), model_args=(PONG_FRAMES, PONG_ACTIONS, 256),
                          save_summary_steps=10 ** 9, save_checkpoints_steps=10 ** 9)
    estimator.train(lambda: tf.data.Dataset.from_tensors(batch).repeat(), max_steps=1)  # build and trace
    flops = count_flops(estimator._train_step.get_concrete_function(batch))
    estimator._train_step(batch)
    start = time.perf_counter()
    for _ in range(steps):
        metrics = estimator._train_step(batch)
    float(metrics["loss"])
    train_seconds = (time.perf_counter() - start) / steps

    history = fake_batch(hparams, 16)["frames"][:, :hparams.num_context_frames]
    actions = tf.zeros([16], tf.int32)
    state = estimator.model.initial_state(16)
    temperature = tf.constant(1.0)
    estimator.model.next_frame(history, actions, state, temperature)[0].numpy()
    start = time.perf_counter()
    for _ in range(steps):
        frames, _, state = estimator.model.next_frame(history, actions, state, temperature)
    frames.numpy()
    frame_seconds = (time.perf_counter() - start) / steps / 16
    return dict(flops=flops, train_seconds=train_seconds, frame_seconds=frame_seconds,
                params=sum(int(tf.size(v)) for v in estimator.model.trainable_variables))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--steps", type=int, default=3, help="timed training steps and inference batches")
    args = parser.parse_args()
    devices = ", ".join(d.device_type for d in tf.config.list_physical_devices())
    matmul = matmul_flops_per_second()
    print(f"devices: {devices}; dense matmul: {matmul / 1e9:.1f} GFLOP/s")
    for set_name in args.sets.split(","):
        r = bench(set_name, args.steps)
        achieved = r["flops"] / r["train_seconds"]
        print(f"{set_name}: {r['params'] / 1e6:.2f}M params; training {1 / r['train_seconds']:.3f} steps/s "
              f"({r['flops'] / 1e9:.1f} GFLOP/step, {achieved / 1e9:.1f} GFLOP/s = {achieved / matmul:.0%} of matmul); "
              f"inference at batch 16: {1 / r['frame_seconds']:.1f} frames/s ({r['frame_seconds'] * 1e3:.2f} ms/frame)")


if __name__ == "__main__":
    main()
