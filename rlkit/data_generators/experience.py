"""Collecting real experience into storage shards with any policy, resumably.

Used by the `collect` command (random policy) and by the model-based loop (its current policy).
The steps come from an `EnvSteps` (a batched env in this process) or, in the loop with
real_num_workers > 0, from Ray actors (`rlkit.rl.loops.workers`): the shards are the same either way.
"""

import numpy as np
from absl import logging

from rlkit.data_generators import storage
from rlkit.data_generators.batch_env import FrameStack
from rlkit.progress import Progress


class EnvSteps:
    """A batched env stepped by `act(stacked_observations, temperature) -> actions` at temperature
    1 (default: uniformly random), from a reset with `seed`. `take(n)` gives its next n steps as
    [(frames [N, ...] the actions were taken on, actions [N], Step)]."""

    def __init__(self, env, act, frame_stack_size, seed):
        self.num_envs = env.num_envs
        self.act = act or random_policy(env.action_space, seed)
        self.env = FrameStack(env, frame_stack_size)
        self.observation = self.env.reset(seed=seed)

    def take(self, num_steps):
        records = []
        for _ in range(num_steps):
            actions = self.act(self.observation, 1.0)
            next_observation, step = self.env.step(actions)
            records.append((self.observation[:, -1], actions, step))
            self.observation = next_observation
        return records


def collect_experience(env, data_dir, epoch, num_agent_steps, shard_steps, seed, act=None,
                       frame_stack_size=1, steps_from=None):
    """Steps `env` until `num_agent_steps` are stored in `data_dir` for `epoch`, continuing where
    the epoch's last whole shard ended; returns the mean episode return (nan if none ended).

    `act(stacked_observations, temperature) -> actions` (default: uniformly random) sees the
    last `frame_stack_size` frames of each env; a shard is written every `shard_steps` steps per
    env and at the end. steps_from(seed): where the steps come from instead of `env` (an object
    with `num_envs` and `take` as EnvSteps; Ray actors).
    """
    done_steps = storage.stored_steps(data_dir, epoch)
    if done_steps >= num_agent_steps:
        return float("nan")
    seed += done_steps  # a resumed collection starts new episodes with a seed of their own
    steps = steps_from(seed) if steps_from is not None else EnvSteps(env, act, frame_stack_size, seed)
    writer = storage.RolloutWriter(data_dir, epoch, steps.num_envs)
    progress = Progress(num_agent_steps, done_steps)
    returns = []
    while done_steps < num_agent_steps:
        wanted = min(shard_steps, -(-(num_agent_steps - done_steps) // steps.num_envs))
        for frames, actions, step in steps.take(wanted):
            writer.add(frames, actions, step)
            returns.extend(step.episode_return[step.done].tolist())
        done_steps += wanted * steps.num_envs
        writer.write_shard()
        mean_return = float(np.mean(returns)) if returns else float("nan")
        logging.info(progress.line(done_steps, episodes=len(returns), mean_return=mean_return))
    return float(np.mean(returns)) if returns else float("nan")


def random_policy(action_space, seed):
    """`act(observations, temperature) -> actions`: uniformly random actions, one per env of a
    batch (the baseline policy of collection and evaluation; the temperature is ignored)."""
    rng = np.random.default_rng(seed)
    if hasattr(action_space, "n"):
        return lambda observation, temperature=1.0: rng.integers(action_space.n, size=len(observation))
    # A Box: uniform within its bounds (the random baseline of a continuous-control env).
    low, high = action_space.low, action_space.high
    return lambda observation, temperature=1.0: rng.uniform(low, high, size=(len(observation),) + low.shape).astype(
        action_space.dtype)
