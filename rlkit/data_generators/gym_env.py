"""Any gymnasium environment behind the BatchEnv interface.

Used for classic control and other gymnasium ids, and for Atari when per-env gymnasium
wrappers are configured, which the native Atari vector env cannot run.
"""

import ale_py
import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from rlkit.data_generators.atari import STICKY_ACTION_PROBABILITY, gymnasium_atari_id
from rlkit.data_generators.batch_env import BatchEnv
from rlkit.display import draw_offscreen_quietly
from rlkit.errors import UserError


def gymnasium_ids():
    gym.register_envs(ale_py)
    return sorted(gym.envs.registry)


def atari_preprocessing(frame_height=105, frame_width=80, grayscale=False, frame_skip=4,
                        max_num_noops=8):
    """gymnasium's AtariPreprocessing with rlkit's settings, as a per-env wrapper."""
    def wrap(env):
        return gym.wrappers.AtariPreprocessing(
            env, noop_max=max_num_noops * frame_skip, frame_skip=frame_skip,
            screen_size=(frame_width, frame_height), terminal_on_life_loss=False,
            grayscale_obs=grayscale, grayscale_newaxis=True, scale_obs=False)
    return wrap


class GymBatchEnv(BatchEnv):
    """N copies of a gymnasium env in a synchronous gymnasium vector env."""

    def __init__(self, env_id, num_envs, wrappers=(), clip_rewards=False, scale_observations=False, **make_kwargs):
        if make_kwargs.get("render_mode"):
            # gymnasium's drawing code starts all of pygame, sound and display included, and SDL
            # prints errors of its own where it finds neither; rlkit plays no sound.
            draw_offscreen_quietly()
        self._env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync",
                                 vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
                                 wrappers=list(wrappers) + ([_scaled_to_unit_box] if scale_observations else []),
                                 **make_kwargs)
        game = self._env.envs[0].unwrapped
        meanings = game.get_action_meanings() if hasattr(game, "get_action_meanings") else None
        super().__init__(num_envs, self._env.single_observation_space,
                         self._env.single_action_space, meanings, clip_rewards)

    def _reset(self, seed):
        observation, _ = self._env.reset(seed=seed)
        return observation

    def _step(self, actions):
        if isinstance(self.action_space, gym.spaces.Box):  # policies may sample past the bounds
            actions = np.clip(actions, self.action_space.low, self.action_space.high)
        observation, reward, terminated, truncated, _ = self._env.step(actions)
        return observation, reward, terminated, truncated

    def render(self):
        """The envs' own pictures where they were made with render_mode="rgb_array", else None."""
        if self._env.render_mode != "rgb_array":
            return None
        return np.stack(self._env.render())

    def close(self):
        self._env.close()


def _scaled_to_unit_box(env):
    """The env with each observation mapped linearly from its space's bounds onto [-1, 1]."""
    space = env.observation_space
    if not (isinstance(space, gym.spaces.Box) and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        raise UserError(f"scale_observations=True needs finite observation bounds; {env.spec.id}'s are not all finite: "
                        f"set scale_observations=False")
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    unit_box = gym.spaces.Box(-1.0, 1.0, space.shape, np.float32)
    return gym.wrappers.TransformObservation(
        env, lambda observation: (2.0 * (observation - low) / (high - low) - 1.0).astype(np.float32), unit_box)


def gym_atari_batch_env(game, num_envs, wrappers=(), frame_height=105, frame_width=80,
                        grayscale=False, frame_skip=4, max_num_noops=8, sticky_actions=False,
                        max_episode_frames=108000, episodic_life=False):
    """Atari through gymnasium: the same preprocessing as AtariBatchEnv, plus extra wrappers."""
    if episodic_life:
        raise UserError("episodic_life=True needs rlkit's own Atari env: drop the gin gym_wrappers, or set "
                         "episodic_life=False")
    preprocessing = atari_preprocessing(frame_height, frame_width, grayscale, frame_skip,
                                        max_num_noops)
    return GymBatchEnv(
        gymnasium_atari_id(game), num_envs, wrappers=[preprocessing, *wrappers], clip_rewards=True,
        frameskip=1,
        repeat_action_probability=STICKY_ACTION_PROBABILITY if sticky_actions else 0.0,
        max_num_frames_per_episode=max_episode_frames)
