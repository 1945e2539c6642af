"""What a NAF run's Q-function says over MountainCar's state space (docs/off_policy.md, "Why no
push"): from each run's last checkpoint, on a grid of 270 states (positions -1.2..0.5, velocities
-0.07..0.07), the curvature P = L L^T (median and range), the mean |mu| and the mean V.

    python scripts/naf_probe.py RUN [RUN ...]
"""

import os
import sys

import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)
import gymnasium as gym
import numpy as np
import tensorflow as tf

from rlkit.cli import saved_hparams
from rlkit.rl.learners.learner import build_learner


def probe(run):
    hparams = saved_hparams(run)
    env = gym.make(hparams.game)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed=0)
    tf.train.Checkpoint(network=learner.network).read(tf.train.latest_checkpoint(os.path.join(run, "checkpoints"))) \
        .expect_partial()
    positions, velocities = np.meshgrid(np.linspace(-1.2, 0.5, 18), np.linspace(-0.07, 0.07, 15))
    states = np.stack([positions.ravel(), velocities.ravel()], -1).astype(np.float32)[:, None]  # [B, frames 1, 2]
    values, means, lower, _ = learner.network(states)
    curvature = tf.square(lower[:, 0, 0]).numpy() + hparams.naf.curvature_floor
    return (f"| {os.path.basename(run)} | {np.median(curvature):.4f} ({curvature.min():.2g} to {curvature.max():.3g}) "
            f"| {np.abs(means.numpy()).mean():.3f} | {values.numpy().mean():.1f} |")


if __name__ == "__main__":
    print("| run | P median (range) | mean abs mu | V mean |\n| --- | --- | --- | --- |")
    for path in sys.argv[1:]:
        print(probe(path))
