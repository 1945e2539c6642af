"""Learners, rollout loops and the trainer commands.

The learner registry (rlkit.rl.learner) imports the modules that register rlkit's learners at
its first lookup.
"""
