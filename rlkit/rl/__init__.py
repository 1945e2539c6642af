"""Learners, rollout loops and the trainer commands.

Importing this package registers every learner rlkit ships.
"""

from rlkit.rl import dqn, naf, policy_gradient, ppo  # noqa: F401  (registers the learners)
