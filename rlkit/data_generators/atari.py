"""Batched Atari on ale-py's C++ `AtariVectorEnv`, with SimPLe's preprocessing.

The ROMs ship in ale-py's wheel. Frame skip with max-pool over the last two frames, resizing
(OpenCV INTER_AREA), grayscale, no-ops at reset, sticky actions and the episode frame cap all
run natively in C++ threads; rlkit only clips rewards and counts returns on top.
"""

import os

import ale_py
import gymnasium as gym
import numpy as np
from ale_py import roms
from ale_py.vector_env import AtariVectorEnv

from rlkit.data_generators.batch_env import BatchEnv

# Machado et al. (2018): with sticky actions the emulator repeats the last action with p=0.25.
STICKY_ACTION_PROBABILITY = 0.25


def atari_games():
    """Snake_case names of every game whose ROM ale-py ships."""
    return sorted(roms.get_all_rom_ids())


def is_atari_game(name):
    return name in roms.get_all_rom_ids()


def gymnasium_atari_id(game):
    """'pong' -> 'ALE/Pong-v5', for the gymnasium fallback."""
    gym.register_envs(ale_py)
    for env_id, spec in gym.envs.registry.items():
        if env_id.startswith("ALE/") and env_id.endswith("-v5") and spec.kwargs.get("game") == game:
            return env_id
    raise ValueError(f"no gymnasium id for Atari game {game!r}")


def native_noop_max(max_num_noops, frame_skip):
    """ale-py draws 0..noop_max-1 no-op frames at reset; this spans 0..max_num_noops agent steps."""
    return max_num_noops * frame_skip + 1 if max_num_noops > 0 else 0


class AtariBatchEnv(BatchEnv):
    """N Atari games stepped together by ale-py's native vector env."""

    def __init__(self, game, num_envs, frame_height=105, frame_width=80, grayscale=False,
                 frame_skip=4, max_num_noops=8, sticky_actions=False, max_episode_frames=108000,
                 episodic_life=False):
        self._env = AtariVectorEnv(
            game, num_envs,
            img_height=frame_height, img_width=frame_width, grayscale=grayscale,
            stack_num=1,  # rlkit stacks frames itself (FrameStack); storage keeps single frames
            frameskip=frame_skip, maxpool=True,
            noop_max=native_noop_max(max_num_noops, frame_skip),
            repeat_action_probability=STICKY_ACTION_PROBABILITY if sticky_actions else 0.0,
            max_num_frames_per_episode=max_episode_frames,
            reward_clipping=False,  # unclipped scores are reported; BatchEnv clips for learning
            use_fire_reset=False,
            # A lost life ends the episode for the learner; only a game over resets the game.
            episodic_life=episodic_life,
            autoreset_mode="SameStep",
            # One thread per core: ale-py's default of one per env oversubscribes small machines
            # (8 envs on 2 cores: 3,980 vs 4,400 steps/s).
            num_threads=min(num_envs, len(os.sched_getaffinity(0))),
        )
        single = self._env.single_observation_space
        frame_shape = single.shape[1:] + ((1,) if grayscale else ())
        observation_space = gym.spaces.Box(0, 255, frame_shape, np.uint8)
        meanings = [action.name for action in self._env.ale.get_action_set()]
        super().__init__(num_envs, observation_space, self._env.single_action_space, meanings,
                         clip_rewards=True)
        self._frame_shape = frame_shape

    def _frames(self, observation):
        # Native observations are [N, stack=1, H, W(, 3)]; rlkit's are [N, H, W, C].
        return observation.reshape((self.num_envs,) + self._frame_shape)

    def _reset(self, seed):
        observation, _ = self._env.reset(seed=seed)
        return self._frames(observation)

    def _step(self, actions):
        observation, reward, terminated, truncated, _ = self._env.step(actions.astype(np.int32))
        return self._frames(observation), reward, terminated, truncated

    def close(self):
        # AtariVectorEnv's close does not stop its C++ envs and threads: they go with the object.
        # Dropping it here frees them now, while Python is whole, not whenever the collector
        # (or, after a Ctrl-C, interpreter shutdown) gets to them.
        if self._env is not None:
            self._env.close()
            self._env = None
