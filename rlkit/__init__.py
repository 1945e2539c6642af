"""rlkit: model-based (SimPLe) and model-free deep RL on TensorFlow 2 / Keras 3.

Importing rlkit runs `rlkit.startup` first (TensorFlow's settings and import finders, which only
work if they come before TensorFlow's import); the package root itself holds nothing else.
"""

from rlkit import startup  # noqa: F401  (before anything imports TensorFlow)

__version__ = "0.1.0"
