"""Return estimators shared by the policy-gradient learners."""

import numpy as np


def gae(rewards, values, dones, last_values, gamma, lam):
    """Generalized advantage estimation (Schulman et al. 2016) over a [T, N] rollout.

    rewards, values, dones: [T, N]; dones[t] marks that the episode ended after step t, so
    nothing after it is bootstrapped. last_values: [N], the value of the observation after
    the last step. Returns (advantages, returns), both [T, N] float32.
    """
    num_steps = rewards.shape[0]
    advantages = np.zeros_like(rewards, dtype=np.float32)
    next_advantage = np.zeros_like(last_values, dtype=np.float32)
    next_values = last_values
    for t in reversed(range(num_steps)):
        not_done = 1.0 - dones[t].astype(np.float32)
        delta = rewards[t] + gamma * next_values * not_done - values[t]
        next_advantage = delta + gamma * lam * not_done * next_advantage
        advantages[t] = next_advantage
        next_values = values[t]
    return advantages, (advantages + values).astype(np.float32)
