"""A world model behind the BatchEnv interface, so PPO trains inside it unchanged.

Each env keeps its last `num_context_frames` frames and the model's recurrent state; all envs
step together through the model's `next_frame_and_end`, and rewards come from the reward head.
`reset` starts every env from a random window of real frames of a FrameStore (env 0 from the
start of a real episode, so the policy also learns the game's opening). As in SimPLe, the
model-based loop resets it before every fixed-length PPO rollout, and PPO bootstraps from the
value of the last frame. A model without `predict_episode_ends` (SimPLe's) never ends an
episode; one with it ends the episode on the step taken from a frame it predicted to be the
last, or with `end_target=ending_step` on the step it says ends it, and that env starts again
from a new real window, as a real env resets.

Rewards are the reward head's likeliest class, as in SimPLe, or with reward="expected" its
mean, P(1) - P(-1) (not in SimPLe): where rewards are rare the likeliest class is almost
always 0, even on steps the head rates far above the rest (docs/results.md, check_rewards).
"""

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rlkit.data_generators.batch_env import BatchEnv
from rlkit.models.world_model import end_target

SIMULATED_REWARDS = ("likeliest", "expected")


class SimulatedBatchEnv(BatchEnv):
    def __init__(self, model, store, num_envs, action_space, action_meanings=None, temperature=1.0, epochs=None,
                 reward="likeliest"):
        """store: a FrameStore of real experience; epochs: those it starts from (default all);
        reward: "likeliest" (SimPLe) or "expected" (the head's mean, in [-1, 1])."""
        if reward not in SIMULATED_REWARDS:
            raise ValueError(f"reward={reward!r}: one of {SIMULATED_REWARDS}")
        self.model = model
        self.context = model.hparams.num_context_frames
        self.store, self.epochs = store, epochs
        if not store.chosen_episodes(epochs, self.context, from_start=True):
            raise ValueError("the world model's env needs at least one stored episode start "
                             f"with {self.context} frames")
        self.temperature = temperature
        self.ends_on_step = end_target(model.hparams) == "ending_step"
        self.expected_reward = reward == "expected"
        super().__init__(num_envs, gym.spaces.Box(0, 255, model.frame_shape, np.uint8), action_space,
                         action_meanings, clip_rewards=not self.expected_reward)
        self._rng = np.random.default_rng()
        self._history = self._state = self._on_last_frame = None

    def initial_windows(self, count=None):
        """`count` (default N) windows of k real steps, stacked (frames [count, k, H, W, C],
        actions [count, k], ...): the first from an episode start, the others anywhere."""
        windows = [self.store.random_window(self._rng, self.context, from_start=env == 0, epochs=self.epochs)
                   for env in range(count or self.num_envs)]
        return {name: np.stack([w[name] for w in windows]) for name in windows[0]}

    def _start(self, count):
        """(history, state) of `count` envs started from new real windows."""
        windows = self.initial_windows(count)
        history = windows["frames"]
        return history, self.model.start_state(history, windows["actions"][:, :-1], self.temperature)

    def _reset(self, seed):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._history, self._state = self._start(self.num_envs)
        self._on_last_frame = np.zeros(self.num_envs, bool)
        return self._history[:, -1]

    def initial_stack(self, observation, k):
        """A policy starts from the same real frames as the model (as many as it stacks)."""
        if k <= self.context:
            return self._history[:, self.context - k:].copy()
        return super().initial_stack(observation, k)

    def _step(self, actions):
        frames, rewards, ends, state = self.model.next_frame_and_end(
            tf.convert_to_tensor(self._history), tf.constant(actions, tf.int32), self._state,
            tf.constant(self.temperature, tf.float32), expected_reward=self.expected_reward)
        frames, rewards = frames.numpy(), rewards.numpy().astype(np.float32)
        self._history = np.concatenate([self._history[:, 1:], frames[:, None]], axis=1)
        if self.ends_on_step:  # the model says whether this step ends its episode
            terminated = ends.numpy()
        else:  # it says whether the frame it predicted is the last: the step taken on it ends the episode
            terminated, self._on_last_frame = self._on_last_frame, ends.numpy()
        if terminated.any():  # those envs start again from real frames, as a real env resets
            # A model's state may be a structure of tensors (the RSSM's (h, z)).
            state = tf.nest.map_structure(lambda part: part.numpy(), state)
            restarted = np.flatnonzero(terminated)
            history, new_state = self._start(len(restarted))
            for part, new_part in zip(tf.nest.flatten(state), tf.nest.flatten(new_state)):
                part[restarted] = new_part.numpy()
            self._history[restarted] = history
            frames[restarted], self._on_last_frame[restarted] = history[:, -1], False
        self._state = tf.nest.map_structure(tf.convert_to_tensor, state)
        return frames, rewards, terminated, np.zeros(self.num_envs, bool)
