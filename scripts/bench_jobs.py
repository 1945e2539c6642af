"""Runs at a time against threads per run (the experiment script's JOBS=N): N processes each
doing a training step on cores / N TensorFlow threads, against one process on all cores, as
steps/s summed over the processes in the same time window. The steps: dreamer_v2_minatar's
gradient step (world model and actor-critic) and rlmb_minatar's world-model step (SimPLe).

    python scripts/bench_jobs.py [--workloads=dreamer,simple] [--jobs=1,2] [--seconds=60]

Every process traces its step first; only the steps started inside a window that opens once all
of them have had time to do so are counted. The machine should be otherwise idle.
"""

import argparse
import json
import os
import subprocess
import sys
import time

GAME = "minatar/breakout"
SETS = {"dreamer": "dreamer_v2_minatar", "simple": "rlmb_minatar"}


def dreamer_step():
    """dreamer_v2_minatar's gradient step on a random batch (bench_dreamer's)."""
    from bench_dreamer import build

    _, env, _, agent, batch = build(SETS["dreamer"])
    env.close()
    return lambda: agent.update(batch)


def simple_step():
    """rlmb_minatar's world-model training step (the SimPLe loop's) on a random batch."""
    import tempfile

    import tensorflow as tf

    from rlkit.data_generators.make_env import frame_shape, pixel_values
    from rlkit.hparams import create_hparams
    from rlkit.rl.loops.world_model_training import world_model_estimator

    hparams = create_hparams(SETS["simple"], f"game={GAME}")
    model, shape = hparams.world_model, frame_shape(hparams)
    length = model.num_context_frames + model.num_target_frames
    frames = tf.cast(tf.random.uniform((model.batch_size, length) + shape, 0, 2, tf.int32), tf.uint8)
    batch = dict(frames=frames, actions=tf.zeros([model.batch_size, length], tf.int32),
                 rewards=tf.zeros([model.batch_size, length], tf.int32))
    estimator = world_model_estimator(model, tempfile.mkdtemp(), shape, 3, pixel_values(hparams))
    estimator.train(lambda: tf.data.Dataset.from_tensors(batch).repeat(), max_steps=1)  # builds the model
    return lambda: estimator._train_step(batch)


def worker(workload, window_start, window_end):
    """Steps started inside [window_start, window_end) (wall-clock times), as JSON."""
    import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)

    import numpy as np
    import tensorflow as tf

    step = {"dreamer": dreamer_step, "simple": simple_step}[workload]()
    step()  # traces
    traced_late = max(0.0, time.time() - window_start)  # seconds of the window missed
    steps = 0
    while time.time() < window_end:
        started = time.time()
        tf.nest.map_structure(np.asarray, step())  # waits for the step's results
        steps += started >= window_start
    print(json.dumps(dict(steps=steps, traced_late=traced_late)))


def measure(workload, jobs, seconds, trace_seconds):
    """(steps/s over all `jobs` processes, threads each)."""
    threads = max(1, os.cpu_count() // jobs)
    window_start = time.time() + trace_seconds
    env = dict(os.environ, TF_NUM_INTRAOP_THREADS=str(threads), TF_NUM_INTEROP_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, __file__, "--worker", workload, str(window_start), str(window_start + seconds)]
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, cwd=os.path.dirname(__file__))
                 for _ in range(jobs)]
    results = [json.loads(p.communicate()[0].decode().strip().splitlines()[-1]) for p in processes]
    if any(r["traced_late"] > 0 for r in results):
        print(f"  a process traced {max(r['traced_late'] for r in results):.0f} s into the window: "
              "raise --trace_seconds", flush=True)
    return sum(r["steps"] for r in results) / seconds, threads


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        worker(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="dreamer,simple", help=f"of {', '.join(SETS)}")
    parser.add_argument("--jobs", default="1,2", help="processes at a time, each one measured")
    parser.add_argument("--seconds", type=float, default=60, help="the counting window")
    parser.add_argument("--trace_seconds", type=float, default=90,
                        help="before the window: TensorFlow's import and the step's tracing in every process")
    args = parser.parse_args()
    for workload in args.workloads.split(","):
        rates = {}
        for jobs in (int(j) for j in args.jobs.split(",")):
            rates[jobs], threads = measure(workload, jobs, args.seconds, args.trace_seconds)
            print(f"{SETS[workload]}: {jobs} at a time, {threads} threads each: {rates[jobs]:.2f} steps/s in all "
                  f"({rates[jobs] / rates[min(rates)]:.2f}x {min(rates)} at a time)", flush=True)


if __name__ == "__main__":
    main()
