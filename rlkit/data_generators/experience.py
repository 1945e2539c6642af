"""Collecting real experience into storage shards with any policy, resumably.

Used by the `collect` command (random policy) and by the model-based loop (its current policy).
"""

import numpy as np
from absl import logging

from rlkit.data_generators import storage
from rlkit.data_generators.batch_env import FrameStack
from rlkit.progress import Progress


def collect_experience(env, data_dir, epoch, num_agent_steps, shard_steps, seed, act=None,
                       frame_stack_size=1):
    """Steps `env` until `num_agent_steps` are stored in `data_dir` for `epoch`, continuing where
    the epoch's last whole shard ended; returns the mean episode return (nan if none ended).

    `act(stacked_observations, temperature) -> actions` (default: uniformly random) sees the
    last `frame_stack_size` frames of each env and samples at temperature 1; a shard is written
    every `shard_steps` steps per env and at the end.
    """
    done_steps = storage.stored_steps(data_dir, epoch)
    if done_steps >= num_agent_steps:
        return float("nan")
    writer = storage.RolloutWriter(data_dir, epoch, env.num_envs)
    seed += done_steps  # a resumed collection starts new episodes with a seed of their own
    act = act or random_policy(env.action_space, seed)
    stacked_env = FrameStack(env, frame_stack_size)
    progress = Progress(num_agent_steps, done_steps)
    observation = stacked_env.reset(seed=seed)
    returns = []
    while done_steps < num_agent_steps:
        actions = act(observation, 1.0)
        next_observation, step = stacked_env.step(actions)
        writer.add(observation[:, -1], actions, step)
        observation = next_observation
        returns.extend(step.episode_return[step.done].tolist())
        done_steps += env.num_envs
        if writer.num_buffered_steps == shard_steps or done_steps >= num_agent_steps:
            writer.write_shard()
            mean_return = float(np.mean(returns)) if returns else float("nan")
            logging.info(progress.line(done_steps, episodes=len(returns), mean_return=mean_return))
    return float(np.mean(returns)) if returns else float("nan")


def random_policy(action_space, seed):
    """`act(observations, temperature) -> actions`: uniformly random actions, one per env of a
    batch (the baseline policy of collection and evaluation; the temperature is ignored)."""
    rng = np.random.default_rng(seed)
    return lambda observation, temperature=1.0: rng.integers(action_space.n, size=len(observation))
