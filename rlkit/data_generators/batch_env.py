"""The batched-environment interface every rlkit trainer uses, and frame stacking.

A `BatchEnv` steps N environments together on numpy batches. An environment whose episode
ends is reset in the same step: the observation returned for it is the first one of its next
episode, and `done` marks the step that ended the old one. Rewards come twice: `reward`
(clipped to {-1, 0, 1} on Atari) is what agents learn from, `raw_reward` is the game's score,
and `episode_return` reports unclipped returns of episodes that just ended.
"""

import abc
import dataclasses

import numpy as np


@dataclasses.dataclass
class Step:
    """One step of a BatchEnv; every array has a leading batch dimension N."""
    observation: np.ndarray     # next observation; for a done env, the first of its next episode
    reward: np.ndarray          # float32, clipped on Atari: what agents learn from
    raw_reward: np.ndarray      # float32, the game's own score
    terminated: np.ndarray      # bool, the episode ended in the game
    truncated: np.ndarray       # bool, the episode hit its length cap
    episode_return: np.ndarray  # float32, unclipped return of the episode that ended (0 where not done)
    episode_clipped_return: np.ndarray  # float32, its return in clipped rewards (0 where not done)
    episode_length: np.ndarray  # int32, agent steps of the episode that ended (0 where not done)

    @property
    def done(self):
        return self.terminated | self.truncated


class BatchEnv(abc.ABC):
    """N environments stepped together. Subclasses implement `_reset` and `_step`."""

    def __init__(self, num_envs, observation_space, action_space, action_meanings, clip_rewards):
        self.num_envs = num_envs
        self.observation_space = observation_space  # of one env
        self.action_space = action_space            # of one env
        self.action_meanings = action_meanings      # list of names for Atari, None otherwise
        self.clip_rewards = clip_rewards
        self._returns = np.zeros(num_envs, np.float32)
        self._clipped_returns = np.zeros(num_envs, np.float32)
        self._lengths = np.zeros(num_envs, np.int32)

    @property
    def observation_shape(self):
        return self.observation_space.shape

    def reset(self, seed=None):
        """Resets every env; with a seed, env i is seeded with seed + i. Returns observations."""
        self._returns[:] = 0
        self._clipped_returns[:] = 0
        self._lengths[:] = 0
        return self._reset(seed)

    def step(self, actions):
        observation, raw_reward, terminated, truncated = self._step(np.asarray(actions))
        return self.count_step(observation, raw_reward, terminated, truncated)

    def count_step(self, observation, raw_reward, terminated, truncated):
        """The Step of what `_step` returned: rewards clipped, the episodes' running totals
        advanced, and reported and reset where an episode ended."""
        raw_reward = raw_reward.astype(np.float32)
        reward = np.sign(raw_reward) if self.clip_rewards else raw_reward
        self._returns += raw_reward
        self._clipped_returns += reward
        self._lengths += 1
        done = terminated | truncated
        step = Step(observation, reward, raw_reward, terminated, truncated,
                    episode_return=np.where(done, self._returns, 0).astype(np.float32),
                    episode_clipped_return=np.where(done, self._clipped_returns, 0).astype(np.float32),
                    episode_length=np.where(done, self._lengths, 0).astype(np.int32))
        for running_total in (self._returns, self._clipped_returns, self._lengths):
            running_total[done] = 0
        return step

    @abc.abstractmethod
    def _reset(self, seed):
        """Returns the first observations [N, ...]."""

    @abc.abstractmethod
    def _step(self, actions):
        """Returns (observation, raw_reward, terminated, truncated), autoresetting done envs."""

    def initial_stack(self, observation, k):
        """The frame stack [N, k, ...] a policy first sees after reset: k copies of the first frame.

        Envs that start from real history (the world model's env) return that history instead.
        """
        return np.repeat(observation[:, None], k, axis=1)

    def render(self):
        """RGB pictures [N, H, W, 3] of the envs' current states for people to watch, or None
        where the observations are the pictures (Atari's and MinAtar's frames)."""
        return None

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FrameStack:
    """The last k observations of each env, [N, k, ...], oldest first, for policies.

    After reset the env chooses the first stack (k copies of the first observation, or the real
    frames a world model starts from); when an episode ends mid-rollout the stack restarts as k
    copies of its first observation, so a policy never sees frames from two episodes at once.
    """

    def __init__(self, env, k):
        self.env = env
        self.k = k
        self._stack = None

    def reset(self, seed=None):
        observation = self.env.reset(seed)
        self._stack = self.env.initial_stack(observation, self.k)
        return self._stack

    def step(self, actions):
        """Steps the env; returns (stacked observations, the env's Step).

        Each call returns a new array, so callers may keep the ones they were given.
        """
        step = self.env.step(actions)
        stack = np.concatenate([self._stack[:, 1:], step.observation[:, None]], axis=1)
        done = step.done
        if done.any():
            stack[done] = step.observation[done][:, None]
        self._stack = stack
        return stack, step
