"""A world model behind the BatchEnv interface, so PPO trains inside it unchanged.

Each env keeps its last `num_context_frames` frames and the model's recurrent state; all envs
step together through `imagine`, and rewards come from the reward head.
`reset` starts every env from a random window of real frames of a FrameStore (env 0 from the
start of a real episode, so the policy also learns the game's opening). The env never ends an episode itself:
as in SimPLe, the model-based loop resets it before every fixed-length PPO rollout, and PPO
bootstraps from the value of the last frame.
"""

import gymnasium as gym
import numpy as np

from rlkit.data_generators.batch_env import BatchEnv
from rlkit.models.world_model import imagine


class SimulatedBatchEnv(BatchEnv):
    def __init__(self, model, store, num_envs, action_space, action_meanings=None, temperature=1.0, epochs=None):
        """store: a FrameStore of real experience; epochs: those it starts from (default all)."""
        self.model = model
        self.context = model.hparams.num_context_frames
        self.store, self.epochs = store, epochs
        if not store.chosen_episodes(epochs, self.context, from_start=True):
            raise ValueError("the world model's env needs at least one stored episode start "
                             f"with {self.context} frames")
        self.temperature = temperature
        super().__init__(num_envs, gym.spaces.Box(0, 255, model.frame_shape, np.uint8), action_space,
                         action_meanings, clip_rewards=True)
        self._rng = np.random.default_rng()
        self._history = self._state = None

    def initial_windows(self):
        """N windows of k real steps, stacked (frames [N, k, H, W, C], actions [N, k], ...):
        env 0 from an episode start, the others anywhere."""
        windows = [self.store.random_window(self._rng, self.context, from_start=env == 0, epochs=self.epochs)
                   for env in range(self.num_envs)]
        return {name: np.stack([w[name] for w in windows]) for name in windows[0]}

    def _reset(self, seed):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        windows = self.initial_windows()
        self._history = windows["frames"]
        self._state = self.model.start_state(self._history, windows["actions"][:, :-1], self.temperature)
        return self._history[:, -1]

    def initial_stack(self, observation, k):
        """A policy starts from the same real frames as the model (as many as it stacks)."""
        if k <= self.context:
            return self._history[:, self.context - k:].copy()
        return super().initial_stack(observation, k)

    def _step(self, actions):
        frames, rewards, self._history, self._state = imagine(self.model, self._history, actions[:, None],
                                                              self._state, self.temperature)
        never = np.zeros(self.num_envs, bool)
        return frames[:, 0], rewards[:, 0].astype(np.float32), never, never
