"""Return estimators shared by the learners: discounted returns and GAE for policy gradients,
n-step targets for Q-learning."""

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


def discounted_returns(rewards, dones, last_values, gamma):
    """Discounted returns over a [T, N] rollout: R_t = r_t + gamma R_{t+1}, cut after every done
    step and bootstrapped from `last_values` [N] after the last step (A2C's n-step returns; with
    zeros there, and every episode ended, REINFORCE's Monte-Carlo returns). Returns [T, N] float32.
    """
    returns = np.zeros_like(rewards, dtype=np.float32)
    next_return = np.asarray(last_values, np.float32)
    for t in reversed(range(rewards.shape[0])):
        next_return = rewards[t] + gamma * (1.0 - dones[t].astype(np.float32)) * next_return
        returns[t] = next_return
    return returns


def n_step_targets(rewards, dones, gamma):
    """The n-step return of each sampled transition and the discount of its bootstrap.

    rewards, dones: [B, n], the rewards and dones of the n steps from the transition on.
    Returns (returns [B], discounts [B]) float32: returns = sum_k gamma^k r_k up to and including
    the first done step; discounts = gamma^n if no step was done (bootstrap from the value n
    steps later), else 0.
    """
    rewards = np.asarray(rewards, np.float32)
    alive = np.cumprod(1.0 - np.asarray(dones, np.float32), axis=1)  # alive[k]: no done at 0..k
    # Step k counts if no step before it was done.
    counts = np.concatenate([np.ones_like(alive[:, :1]), alive[:, :-1]], axis=1)
    powers = gamma ** np.arange(rewards.shape[1], dtype=np.float32)
    returns = (rewards * counts * powers).sum(axis=1)
    discounts = alive[:, -1] * gamma ** rewards.shape[1]
    return returns.astype(np.float32), discounts.astype(np.float32)
