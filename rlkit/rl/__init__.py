"""Learners, rollout loops and the trainer commands."""
