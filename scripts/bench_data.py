"""Memory and sampling speed of stored experience: the frame store against the old in-memory
window dataset, at growing data sizes, next to what the consumers need.

    python scripts/bench_data.py --data_dirs=DIR_20K,DIR_100K,DIR_1M [--baseline_max_steps=100000]

Each DIR is the output dir of a collection, e.g.
    python -m rlkit.rl.collect --hparams_set=collect_random \\
        --hparams=game=pong,num_agent_steps=1000000,num_envs=16 --output_dir=/work/bench_data/pong_1000000

Every measurement runs in a fresh process, so peak RSS (VmHWM) is its own; "above TF" subtracts
the peak of a process that only imports TensorFlow and builds an empty dataset. Per size:
bytes on disk, the raw frames' bytes, the store's compressed frames, load time, peak RSS above
TF, world-model windows/s (context 4 + 6 targets, the SimPLe stochastic model's) and replay
samples/s (stacks of 4 with the next stack, batches of 32; windows through the tf.data
pipeline, replay batches as a learner draws them). The
baseline is the window dataset as it was before the store (every frame of the data dir as one
TF constant), measured up to --baseline_max_steps. The consumers: the SimPLe world model's
training step (batch 4) and a Nature-CNN DQN update (batch 32, 4x84x84), timed in this run.
"""

import argparse
import json
import os
import subprocess
import sys
import time

CONTEXT, TARGETS, STACK, REPLAY_BATCH = 4, 6, 4, 32


def peak_rss():
    """This process's peak resident set size in bytes (VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def rate(iterator, count):
    next(iterator)  # the pipeline's start-up is not its rate
    start = time.perf_counter()
    for _ in range(count):
        next(iterator)
    return count / (time.perf_counter() - start)


def child_tensorflow():
    import rlkit  # noqa: F401
    import tensorflow as tf

    list(tf.data.Dataset.range(1))
    return {}


def child_store(data_dir, samples):
    import rlkit  # noqa: F401
    import tensorflow as tf  # noqa: F401

    from rlkit.data_generators.frame_store import FrameStore

    start = time.perf_counter()
    store = FrameStore(os.path.join(data_dir, "data"))
    load_seconds = time.perf_counter() - start
    windows = store.window_dataset(CONTEXT, TARGETS, seed=0).batch(4).prefetch(4)
    window_rate = 4 * rate(iter(windows), samples // 4)
    rng = __import__("numpy").random.default_rng(0)
    replay = iter(lambda: store.sample_transitions(rng, REPLAY_BATCH, STACK), None)
    replay_rate = REPLAY_BATCH * rate(replay, samples // REPLAY_BATCH)
    return dict(steps=store.num_steps, frame_shape=list(store.frame_shape), compressed_bytes=store.compressed_bytes,
                load_seconds=load_seconds,
                windows_per_second=window_rate, replay_per_second=replay_rate,
                raw_bytes=store.num_steps * int(__import__("numpy").prod(store.frame_shape)))


def old_window_dataset(data_dir, num_context_frames, num_target_frames, seed=None):
    """The window dataset before the frame store, kept here as the baseline: every episode read
    into numpy, joined, and copied into TF constants."""
    import numpy as np
    import tensorflow as tf

    from rlkit.data_generators import storage

    window = num_context_frames + num_target_frames
    episodes = [e for e in storage.read_rollouts(data_dir).episodes if len(e) >= window]
    offsets = np.cumsum([0] + [len(e) for e in episodes])
    starts = np.concatenate([np.arange(o, o + len(e) - window + 1) for o, e in zip(offsets, episodes)])
    frames = tf.constant(np.concatenate([e.frames for e in episodes]))
    actions = tf.constant(np.concatenate([e.actions for e in episodes]))
    rewards = tf.constant(np.concatenate([e.rewards for e in episodes]).astype(np.int32))

    def gather(start):
        index = start + tf.range(window, dtype=start.dtype)
        return dict(frames=tf.gather(frames, index), actions=tf.gather(actions, index),
                    rewards=tf.gather(rewards, index))

    dataset = tf.data.Dataset.from_tensor_slices(starts.astype(np.int64)).shuffle(len(starts), seed=seed)
    return dataset.map(gather, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def child_baseline(data_dir, samples):
    import rlkit  # noqa: F401

    start = time.perf_counter()
    windows = old_window_dataset(os.path.join(data_dir, "data"), CONTEXT, TARGETS, seed=0).batch(4).prefetch(4)
    iterator = iter(windows)
    load_seconds = time.perf_counter() - start
    return dict(load_seconds=load_seconds, windows_per_second=4 * rate(iterator, samples // 4))


def child_consumers(world_model_steps):
    import rlkit  # noqa: F401
    import keras
    import numpy as np
    import tensorflow as tf

    from rlkit.hparams import create_hparams
    from rlkit.models.estimator import Estimator

    import tempfile
    keras.utils.set_random_seed(0)
    hparams = create_hparams("next_frame_basic_stochastic_discrete")
    length = hparams.num_context_frames + hparams.num_target_frames
    batch = dict(frames=tf.zeros((hparams.batch_size, length, 105, 80, 3), tf.uint8),
                 actions=tf.zeros((hparams.batch_size, length), tf.int32),
                 rewards=tf.zeros((hparams.batch_size, length), tf.int32))
    estimator = Estimator(hparams.model, hparams, tempfile.mkdtemp(), model_args=((105, 80, 3), 6),
                          save_summary_steps=10 ** 9, save_checkpoints_steps=10 ** 9)
    estimator.train(lambda: tf.data.Dataset.from_tensors(batch).repeat(), max_steps=1)  # build and trace
    start = time.perf_counter()
    for _ in range(world_model_steps):
        float(estimator._train_step(batch)["loss"])
    world_model = world_model_steps / (time.perf_counter() - start)

    layers = keras.layers
    inputs = keras.Input((84, 84, STACK), dtype="uint8")
    x = layers.Rescaling(1 / 255)(inputs)
    for filters, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
        x = layers.Conv2D(filters, kernel, stride, activation="relu")(x)
    q_values = layers.Dense(6)(layers.Dense(512, activation="relu")(layers.Flatten()(x)))
    online, target = keras.Model(inputs, q_values), keras.Model(inputs, q_values)
    optimizer = keras.optimizers.RMSprop(2.5e-4)

    @tf.function
    def dqn_update(observations, actions, rewards, dones, next_observations):
        targets = rewards + 0.99 * (1.0 - dones) * tf.reduce_max(target(next_observations), axis=-1)
        with tf.GradientTape() as tape:
            chosen = tf.gather(online(observations), actions, batch_dims=1)
            loss = tf.reduce_mean(keras.losses.huber(targets[:, None], chosen[:, None]))
        gradients = tape.gradient(loss, online.trainable_variables)
        optimizer.apply_gradients(zip(gradients, online.trainable_variables))
        return loss

    stacks = tf.constant(np.random.default_rng(0).integers(0, 255, (REPLAY_BATCH, 84, 84, STACK), np.uint8))
    args = (stacks, tf.zeros(REPLAY_BATCH, tf.int32), tf.zeros(REPLAY_BATCH), tf.zeros(REPLAY_BATCH), stacks)
    for _ in range(5):
        dqn_update(*args)
    start = time.perf_counter()
    for _ in range(50):
        float(dqn_update(*args))
    return dict(world_model_steps_per_second=world_model, world_model_batch=hparams.batch_size,
                dqn_updates_per_second=50 / (time.perf_counter() - start))


def run_child(*args):
    """Runs one measurement in a fresh process; its results with its peak RSS."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, __file__, "--child", json.dumps(args)], capture_output=True,
                            text=True, env=env)
    if result.returncode != 0:
        return dict(error=result.stderr.strip().splitlines()[-1] if result.stderr.strip() else str(result.returncode))
    return json.loads(result.stdout.strip().splitlines()[-1])


def disk_bytes(directory):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(directory) for name in names)


def gb(n):
    return f"{n / 1e9:.2f} GB"


def mb(n):
    return f"{n / 1e6:.1f} MB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_dirs", help="comma-separated collection output dirs, smallest first")
    parser.add_argument("--baseline_max_steps", type=int, default=100_000,
                        help="measure the old window dataset up to this many steps (it holds every frame in memory)")
    parser.add_argument("--samples", type=int, default=3200, help="windows and replay samples timed per size")
    parser.add_argument("--world_model_steps", type=int, default=2, help="timed steps of the full world model")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = json.loads(args.child)
        result = globals()[f"child_{kind}"](*rest)
        print(json.dumps(dict(result, peak_rss=peak_rss())))
        return

    tensorflow = run_child("tensorflow")["peak_rss"]
    consumers = run_child("consumers", args.world_model_steps)
    windows_needed = consumers["world_model_steps_per_second"] * consumers["world_model_batch"]
    replay_needed = consumers["dqn_updates_per_second"] * REPLAY_BATCH
    print(f"TensorFlow alone: peak RSS {gb(tensorflow)}")
    print(f"consumers: SimPLe world model {consumers['world_model_steps_per_second']:.3f} steps/s x batch "
          f"{consumers['world_model_batch']} = {windows_needed:.2f} windows/s; Nature-CNN DQN "
          f"{consumers['dqn_updates_per_second']:.1f} updates/s x {REPLAY_BATCH} = {replay_needed:.0f} samples/s")
    print("| steps | frames | on disk | raw frames | store frames | load s | peak RSS above TF | windows/s (x need) "
          "| replay samples/s (x need) | baseline: peak RSS above TF | baseline windows/s | RSS baseline/store |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    baseline_per_raw_byte = None  # the baseline's memory per raw frame byte, where it was measured
    for data_dir in args.data_dirs.split(","):
        store = run_child("store", data_dir, args.samples)
        if "error" in store:
            print(f"| {data_dir} | store failed: {store['error']} |")
            continue
        above = store["peak_rss"] - tensorflow
        if store["steps"] <= args.baseline_max_steps:
            baseline = run_child("baseline", data_dir, args.samples)
            baseline_above = baseline.get("peak_rss", 0) - tensorflow
            baseline_per_raw_byte = baseline_above / store["raw_bytes"]
            baseline_cells = (f"{gb(baseline_above)} | {baseline.get('windows_per_second', 0):,.0f} | "
                              f"{baseline_above / above:.1f}x")
        elif baseline_per_raw_byte:
            extrapolated = store["raw_bytes"] * baseline_per_raw_byte
            baseline_cells = f"not run: ~{gb(extrapolated)} at its measured bytes per raw byte | | "
        else:
            baseline_cells = "not run | | "
        shape = "x".join(map(str, store["frame_shape"]))
        print(f"| {store['steps']:,} | {shape} | {mb(disk_bytes(data_dir))} | {gb(store['raw_bytes'])} | "
              f"{mb(store['compressed_bytes'])} | {store['load_seconds']:.0f} | {gb(above)} | "
              f"{store['windows_per_second']:,.0f} ({store['windows_per_second'] / windows_needed:,.0f}x) | "
              f"{store['replay_per_second']:,.0f} ({store['replay_per_second'] / replay_needed:,.1f}x) | "
              f"{baseline_cells} |")


if __name__ == "__main__":
    main()
