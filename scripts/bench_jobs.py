"""Runs at a time against threads per run (the experiment script's JOBS=N): N processes each
doing dreamer_v2_minatar's gradient step on cores / N TensorFlow threads, against one process on
all cores, as gradient steps/s summed over the processes in the same time window.

    python scripts/bench_jobs.py [--jobs=1,2] [--seconds=60]

Every process traces its step first; only the steps started inside a window that opens once all
of them have had time to do so are counted. The machine should be otherwise idle.
"""

import argparse
import json
import os
import subprocess
import sys
import time

SET, GAME = "dreamer_v2_minatar", "minatar/breakout"


def worker(window_start, window_end):
    """Gradient steps started inside [window_start, window_end) (wall-clock times), as JSON."""
    import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)

    import numpy as np
    import tensorflow as tf
    from bench_dreamer import random_batch

    from rlkit.data_generators.make_env import frame_shape, make_batch_env, pixel_values
    from rlkit.hparams import create_hparams
    from rlkit.rl.learners.dreamer import DreamerAgent

    hparams = create_hparams(SET, f"game={GAME}")
    env = make_batch_env(hparams, 1)
    shape = frame_shape(hparams)
    agent = DreamerAgent(hparams.actor_critic, hparams.world_model, shape, env.action_space, pixel_values(hparams),
                         seed=0)
    batch = random_batch(hparams, shape, np.random.default_rng(0))
    agent.update(batch)  # traces
    traced_late = max(0.0, time.time() - window_start)  # seconds of the window missed
    steps = 0
    while time.time() < window_end:
        started = time.time()
        tf.nest.map_structure(np.asarray, agent.update(batch))  # waits for the step's results
        steps += started >= window_start
    print(json.dumps(dict(steps=steps, traced_late=traced_late)))


def measure(jobs, seconds, trace_seconds):
    """(gradient steps/s over all `jobs` processes, threads each)."""
    threads = max(1, os.cpu_count() // jobs)
    window_start = time.time() + trace_seconds
    env = dict(os.environ, TF_NUM_INTRAOP_THREADS=str(threads), TF_NUM_INTEROP_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, __file__, "--worker", str(window_start), str(window_start + seconds)]
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, cwd=os.path.dirname(__file__))
                 for _ in range(jobs)]
    results = [json.loads(p.communicate()[0].decode().strip().splitlines()[-1]) for p in processes]
    if any(r["traced_late"] > 0 for r in results):
        print(f"  a process traced {max(r['traced_late'] for r in results):.0f} s into the window: "
              "raise --trace_seconds", flush=True)
    return sum(r["steps"] for r in results) / seconds, threads


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(float(sys.argv[2]), float(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1,2", help="processes at a time, each one measured")
    parser.add_argument("--seconds", type=float, default=60, help="the counting window")
    parser.add_argument("--trace_seconds", type=float, default=90,
                        help="before the window: TensorFlow's import and the step's tracing in every process")
    args = parser.parse_args()
    rates = {}
    for jobs in (int(j) for j in args.jobs.split(",")):
        rates[jobs], threads = measure(jobs, args.seconds, args.trace_seconds)
        baseline = rates[min(rates)]
        print(f"{jobs} at a time, {threads} threads each: {rates[jobs]:.2f} {SET} gradient steps/s in all "
              f"({rates[jobs] / baseline:.2f}x {min(rates)} at a time)", flush=True)


if __name__ == "__main__":
    main()
