"""rlkit: model-based (SimPLe) and model-free deep RL on TensorFlow 2 / Keras 3."""

import os

# TensorFlow leaves its oneDNN CPU kernels off on some x86 CPUs; on the 2-core machines rlkit is
# developed on they make convolution training ~1.6x faster (scripts/bench_ppo.py). This must be set
# before TensorFlow is imported; TF_ENABLE_ONEDNN_OPTS=0 in the environment still turns it off.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

__version__ = "0.1.0"
