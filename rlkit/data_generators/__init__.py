"""Environments and collected experience: batched envs, frame stacking, rollout storage."""
