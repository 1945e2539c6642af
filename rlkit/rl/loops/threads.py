"""TensorFlow's threads for the model-based loops' training steps."""

import os


def one_thread_per_op():
    """Each op on one thread, as many ops at a time as there are cores. Dreamer's and SimPLe's
    MinAtar steps are thousands of small ops (matmuls of 16-64 rows, convolutions of 10x10 maps)
    that gain nothing from a second thread each, while independent ops do run side by side: on
    2 cores Dreamer's gradient step ran 1.1x and SimPLe's world-model step 1.5x faster than with
    TensorFlow's default of every op on both (docs/benchmarks.md). Where the environment sets
    TensorFlow's threads (two runs at a time, a Ray trial), or TensorFlow's runtime has already
    started (a test), they stay as they are."""
    import tensorflow as tf

    if "TF_NUM_INTRAOP_THREADS" in os.environ or "TF_NUM_INTEROP_THREADS" in os.environ:
        return
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(len(os.sched_getaffinity(0)))
    except RuntimeError:  # the runtime is up: its threads are fixed
        pass
