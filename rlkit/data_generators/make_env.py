"""Builds the batched env an experiment's hparams describe.

`game` names an Atari game in snake_case (run natively by ale-py) or any gymnasium id. The
per-env gymnasium wrappers are the swappable part, set with gin:

    make_batch_env.gym_wrappers = [@my_project.MyWrapper]

Configuring any wrapper runs Atari through gymnasium instead of the native vector env.
"""

import gin
import gymnasium as gym

from rlkit.data_generators.atari import AtariBatchEnv, atari_games, is_atari_game
from rlkit.data_generators.gym_env import GymBatchEnv, gym_atari_batch_env, gymnasium_ids
from rlkit.errors import UserError, did_you_mean


# gymnasium's generic wrappers, usable in gin as e.g. `@gym.wrappers.TimeLimit`.
for _wrapper in (gym.wrappers.TimeLimit, gym.wrappers.TransformReward, gym.wrappers.TransformObservation):
    gin.external_configurable(_wrapper, module="gym.wrappers")


def check_game(game):
    """Refuses a name that is neither an Atari game nor a gymnasium id, naming close ones."""
    if is_atari_game(game) or game in gymnasium_ids():
        return
    hint = did_you_mean(game, atari_games() + gymnasium_ids())
    raise UserError(f"unknown game {game!r}{hint} (Atari games are snake_case, e.g. pong, "
                    "ms_pacman; other envs take their gymnasium id, e.g. CartPole-v1)")


def check_image_game(game, needed_by):
    """Refuses a game without image frames where `needed_by` (a world model, say) works on them."""
    check_game(game)
    if not is_atari_game(game):
        raise UserError(f"game {game!r} gives no image frames, and {needed_by} predict frames: use an Atari "
                        "game (pong, breakout, ...)")


def atari_settings(hparams):
    """The preprocessing keyword arguments the Atari envs take, from env hparams."""
    return dict(frame_height=hparams.frame_height, frame_width=hparams.frame_width,
                grayscale=hparams.grayscale, frame_skip=hparams.frame_skip,
                max_num_noops=hparams.max_num_noops, sticky_actions=hparams.sticky_actions,
                max_episode_frames=hparams.max_episode_frames)


def frame_shape(hparams):
    """(height, width, channels) of the frames an Atari env of `hparams` gives."""
    return (hparams.frame_height, hparams.frame_width, 1 if hparams.grayscale else 3)


def action_space_of(hparams):
    """(action space, action meanings) of the game `hparams` name, read off a one-env env."""
    with make_batch_env(hparams, 1) as env:
        return env.action_space, env.action_meanings


@gin.configurable(allowlist=["gym_wrappers"])
def make_batch_env(hparams, num_envs, gym_wrappers=()):
    """A BatchEnv of `num_envs` copies of `hparams.game`."""
    check_game(hparams.game)
    if is_atari_game(hparams.game):
        if gym_wrappers:
            return gym_atari_batch_env(hparams.game, num_envs, gym_wrappers, **atari_settings(hparams))
        return AtariBatchEnv(hparams.game, num_envs, **atari_settings(hparams))
    return GymBatchEnv(hparams.game, num_envs, wrappers=gym_wrappers)
