"""TensorFlow's threads for the model-based loops' training steps."""

import os


def one_thread_per_op():
    """Each op on one thread, as many ops at a time as there are cores. Dreamer's and SimPLe's
    MinAtar steps are thousands of small ops (matmuls of 16-64 rows, convolutions of 10x10 maps)
    that gain nothing from a second thread each, while independent ops do run side by side: on
    2 cores Dreamer's gradient step ran 1.1x and SimPLe's world-model step 1.5x faster than with
    TensorFlow's default of every op on both (docs/benchmarks.md).

    Set through TensorFlow's environment variables, which it reads once, when its runtime starts:
    so before anything runs an op (trainer_model_based does it first). Where the environment
    already sets either (two runs at a time, a Ray trial), as it is."""
    if "TF_NUM_INTRAOP_THREADS" in os.environ or "TF_NUM_INTEROP_THREADS" in os.environ:
        return
    os.environ["TF_NUM_INTRAOP_THREADS"] = "1"
    os.environ["TF_NUM_INTEROP_THREADS"] = str(len(os.sched_getaffinity(0)))
