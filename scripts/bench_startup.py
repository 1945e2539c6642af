"""Seconds a fresh process takes to import TensorFlow and Keras through rlkit, as its commands do
(TensorFlow first), against the same import with rlkit's first-import finders taken out, in one run.

    python scripts/bench_startup.py [--repeats=5]

rlkit's finders (rlkit/__init__.py) keep pandas, matplotlib and scipy out while TensorFlow and
Keras load, hold TensorFlow's C++ start-up lines back, and load both with the garbage collector
off and their objects frozen afterwards. Every command that trains or evaluates pays this import
once at start; the test suite pays it in each of its subprocess runs. The two variants
alternate, each in a new interpreter; the medians of wall and CPU seconds are printed with their
ratios. (TensorFlow looks Keras up before importing it; until 2026-11-26 that lookup used up
rlkit's Keras finder, and this benchmark, importing Keras alone, did not see it.)
"""

import argparse
import resource
import statistics
import subprocess
import sys
import time

RLKIT = "import rlkit, tensorflow, keras"
# The same with rlkit's finders taken out first: TensorFlow's and Keras's own import.
OWN = ("import rlkit, sys; sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, rlkit.startup._FirstImport)]; "
       "import tensorflow, keras")


def seconds_to_run(code):
    """(wall, CPU) seconds of a new interpreter running `code`."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    seconds_to_run(RLKIT)  # the first start reads the files from disk
    times = {"rlkit": [], "own": []}
    for _ in range(args.repeats):
        times["rlkit"].append(seconds_to_run(RLKIT))
        times["own"].append(seconds_to_run(OWN))
    medians = {name: [statistics.median(t[i] for t in runs) for i in (0, 1)] for name, runs in times.items()}
    (rlkit_wall, rlkit_cpu), (own_wall, own_cpu) = medians["rlkit"], medians["own"]
    print(f"import tensorflow, keras (median of {args.repeats}): their own import {own_wall:.2f} s wall, "
          f"{own_cpu:.2f} s CPU; through rlkit {rlkit_wall:.2f} s wall, {rlkit_cpu:.2f} s CPU")
    print(f"saved per process: {own_wall - rlkit_wall:.2f} s wall, {own_cpu - rlkit_cpu:.2f} s CPU; "
          f"rlkit / own: {rlkit_wall / own_wall:.2f} wall, {rlkit_cpu / own_cpu:.2f} CPU")


if __name__ == "__main__":
    main()
