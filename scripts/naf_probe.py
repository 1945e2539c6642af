"""What a NAF run's Q-function says over its task's state space (docs/off_policy.md): from each
run's last checkpoint, on a grid of states, the curvature P = L L^T (median and range), the mean
|mu|, the share of states where mu sits within 5% of a bound (where its tanh passes almost no
gradient) and V's mean and range.

MountainCarContinuous-v0: 270 states (positions -1.2..0.5, velocities -0.07..0.07).
Pendulum-v1: 300 states (angles -pi..pi, 0 upright; angular velocities -8..8).

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


def state_grid(game):
    """[N, observation size] float32 observations spread over the task's state space."""
    if game.startswith("MountainCar"):
        positions, velocities = np.meshgrid(np.linspace(-1.2, 0.5, 18), np.linspace(-0.07, 0.07, 15))
        return np.stack([positions.ravel(), velocities.ravel()], -1).astype(np.float32)
    if game.startswith("Pendulum"):
        angles, velocities = np.meshgrid(np.linspace(-np.pi, np.pi, 20), np.linspace(-8.0, 8.0, 15))
        angles, velocities = angles.ravel(), velocities.ravel()
        return np.stack([np.cos(angles), np.sin(angles), velocities], -1).astype(np.float32)
    raise ValueError(f"no state grid for {game}: MountainCarContinuous-v0 or Pendulum-v1")


def probe(run):
    hparams = saved_hparams(run)
    env = gym.make(hparams.game)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed=0)
    tf.train.Checkpoint(network=learner.network).read(tf.train.latest_checkpoint(os.path.join(run, "checkpoints"))) \
        .expect_partial()
    states = state_grid(hparams.game)[:, None]  # [N, frames 1, observation]
    values, means, lower, _ = learner.network(states)
    curvature = tf.square(lower[:, 0, 0]).numpy() + hparams.naf.curvature_floor
    low, high = env.action_space.low[0], env.action_space.high[0]
    scaled_means = (2 * means.numpy()[:, 0] - (high + low)) / (high - low)  # in [-1, 1]
    at_bound = np.mean(np.abs(scaled_means) > 0.95)
    values = values.numpy()
    return (f"| {os.path.basename(run)} | {np.median(curvature):.4f} ({curvature.min():.2g} to {curvature.max():.3g}) "
            f"| {np.abs(scaled_means).mean():.3f} | {at_bound:.0%} | {values.mean():.1f} ({values.min():.0f} to "
            f"{values.max():.0f}) |")


if __name__ == "__main__":
    print("| run | P median (range) | mean abs mu (share of range) | mu at a bound | V mean (range) |\n"
          "| --- | --- | --- | --- | --- |")
    for path in sys.argv[1:]:
        print(probe(path))
