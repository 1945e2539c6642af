"""Seconds a fresh process takes to import TensorFlow and Keras through rlkit, as its commands do
(TensorFlow first), with rlkit's lean Keras import (pandas and matplotlib kept out while Keras
loads) against Keras's own, in one run.

    python scripts/bench_startup.py [--repeats=5]

Every command that trains or evaluates pays this once at start; the test suite pays it in each
of its subprocess runs. The two variants alternate, each in a new interpreter, and the medians
are printed with their ratio. (TensorFlow looks Keras up before importing it; until 2026-11-26
that lookup used up rlkit's finder, and this benchmark, importing Keras alone, did not see it.)
"""

import argparse
import statistics
import subprocess
import sys
import time

LEAN = "import rlkit, tensorflow, keras"
# The same with rlkit's finder taken out first: Keras's own import.
PLAIN = ("import rlkit, sys; sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != '_LeanKerasImport']; "
         "import tensorflow, keras")


def seconds_to_run(code):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    seconds_to_run(LEAN)  # the first start reads the files from disk
    times = {"lean": [], "plain": []}
    for _ in range(args.repeats):
        times["lean"].append(seconds_to_run(LEAN))
        times["plain"].append(seconds_to_run(PLAIN))
    lean, plain = statistics.median(times["lean"]), statistics.median(times["plain"])
    print(f"import tensorflow, keras with Keras's own: {plain:.2f} s (median of {args.repeats}); "
          f"rlkit's lean import: {lean:.2f} s")
    print(f"saved per process: {plain - lean:.2f} s; lean / own: {lean / plain:.2f}")


if __name__ == "__main__":
    main()
