"""rlkit: model-based (SimPLe) and model-free deep RL on TensorFlow 2 / Keras 3."""

__version__ = "0.1.0"
