"""Builds the batched env an experiment's hparams describe.

`game` names an Atari game in snake_case (run natively by ale-py), a MinAtar game
(`minatar/breakout`, or its gymnasium id `MinAtar/Breakout-v1`) or any gymnasium id. The
per-env gymnasium wrappers are the swappable part, set with gin:

    make_batch_env.gym_wrappers = [@my_project.MyWrapper]

Configuring any wrapper runs Atari through gymnasium instead of the native vector env.
"""

import json
import os

import gin
import gymnasium as gym

from rlkit.data_generators.atari import AtariBatchEnv, atari_games, is_atari_game
from rlkit.data_generators import minatar, storage
from rlkit.data_generators.gym_env import GymBatchEnv, gym_atari_batch_env, gymnasium_ids
from rlkit.errors import UserError, did_you_mean


# gymnasium's generic wrappers, usable in gin as e.g. `@gym.wrappers.TimeLimit`.
for _wrapper in (gym.wrappers.TimeLimit, gym.wrappers.TransformReward, gym.wrappers.TransformObservation):
    gin.external_configurable(_wrapper, module="gym.wrappers")


def check_game(game):
    """Refuses a name that is neither an Atari or MinAtar game nor a gymnasium id, naming close ones."""
    if is_atari_game(game) or game in gymnasium_ids():
        return
    if minatar.is_minatar_game(game):
        minatar.frame_shape(game)  # says how to install MinAtar where it is missing
        return
    hint = did_you_mean(game, atari_games() + minatar.minatar_games() + gymnasium_ids())
    raise UserError(f"unknown game {game!r}{hint} (Atari games are snake_case, e.g. pong, "
                    "ms_pacman; MinAtar's are minatar/breakout and the like; other envs take their gymnasium "
                    "id, e.g. CartPole-v1)")


def is_image_game(game):
    """Whether `game` gives image frames [H, W, C] (Atari and MinAtar), which world models predict."""
    return is_atari_game(game) or minatar.is_minatar_game(game)


def check_image_game(game, needed_by):
    """Refuses a game without image frames where `needed_by` (a world model, say) works on them."""
    check_game(game)
    if not is_image_game(game):
        raise UserError(f"game {game!r} gives no image frames, and {needed_by} predict frames: use an Atari "
                        "game (pong, breakout, ...) or a MinAtar one (minatar/breakout, ...)")


def atari_settings(hparams):
    """The preprocessing keyword arguments the Atari envs take, from env hparams."""
    return dict(frame_height=hparams.frame_height, frame_width=hparams.frame_width,
                grayscale=hparams.grayscale, frame_skip=hparams.frame_skip,
                max_num_noops=hparams.max_num_noops, sticky_actions=hparams.sticky_actions,
                max_episode_frames=hparams.max_episode_frames,
                episodic_life=hparams.episodic_life)


def frame_shape(hparams):
    """(height, width, channels) of the frames the image game of `hparams` gives."""
    if minatar.is_minatar_game(hparams.game):
        return minatar.frame_shape(hparams.game)
    return (hparams.frame_height, hparams.frame_width, 1 if hparams.grayscale else 3)


def _shape_text(shape):
    return "x".join(str(n) for n in shape)


def check_stored_data(hparams, data_dir, source, remedy=None):
    """Refuses, in one line and before anything is written, stored data (a run's data/, collect's
    output) whose frames or actions do not fit the game `hparams` describe: a model built for
    them would break on the first batch. `source` says where the data was named (a flag);
    `remedy`, what to do instead (by default: the override that makes a set's frames fit)."""
    stored = storage.stored_frame_shape(data_dir)
    if stored is None:
        return  # nothing readable: the command's own reading says so
    saved = os.path.join(os.path.dirname(os.path.normpath(data_dir)), "hparams.json")
    data_game = None
    if os.path.exists(saved):
        with open(saved) as f:
            data_game = json.load(f).get("game")
    from_game = f" ({data_game}, says its run's hparams.json)" if data_game else ""
    observation_space, actions, _ = spaces_of(hparams)  # one env, read once
    wanted = frame_shape(hparams) if is_image_game(hparams.game) else observation_space.shape
    if tuple(stored) != tuple(wanted):
        if data_game and data_game != hparams.game:
            fix = f"train on data of {hparams.game}, or add --hparams=game={data_game}"
        elif is_atari_game(hparams.game) and len(stored) == 3 and stored[2] in (1, 3):
            overrides = [f"frame_height={stored[0]}", f"frame_width={stored[1]}"]
            if stored[2] != wanted[2]:
                overrides.append(f"grayscale={stored[2] == 1}")
            fix = "add --hparams=" + ",".join(overrides) + " so the set's frames are the stored ones"
        else:
            fix = f"train on data of {hparams.game}"
        raise UserError(f"{source}={data_dir} holds frames of {_shape_text(stored)}{from_game}, but the set's "
                        f"{hparams.game} frames are {_shape_text(wanted)}: {remedy or fix}")
    largest = storage.largest_stored_action(data_dir)
    if largest is not None and hasattr(actions, "n") and largest >= actions.n:
        raise UserError(f"{source}={data_dir} holds action {largest}{from_game}, but {hparams.game} has "
                        f"{actions.n} actions (0-{actions.n - 1}): {remedy or f'train on data of {hparams.game}'}")


def pixel_values(hparams):
    """How many values each channel of the game's frames takes: 256 on Atari, 2 (off, on) on
    MinAtar. World models predict each channel value as one of this many classes."""
    return minatar.PIXEL_VALUES if minatar.is_minatar_game(hparams.game) else 256


def spaces_of(hparams):
    """(observation space, action space, action meanings) of the game `hparams` name, read off a one-env env."""
    with make_batch_env(hparams, 1) as env:
        return env.observation_space, env.action_space, env.action_meanings


def action_space_of(hparams):
    """(action space, action meanings) of the game `hparams` name."""
    return spaces_of(hparams)[1:]


@gin.configurable(allowlist=["gym_wrappers"])
def make_batch_env(hparams, num_envs, gym_wrappers=(), render=False):
    """A BatchEnv of `num_envs` copies of `hparams.game`; render: a gymnasium env (not Atari or
    MinAtar, whose frames are pictures) draws itself for `BatchEnv.render`."""
    check_game(hparams.game)
    if hparams.scale_observations and (is_atari_game(hparams.game) or minatar.is_minatar_game(hparams.game)):
        raise UserError(f"scale_observations=True maps a gymnasium env's vector observations onto [-1, 1]; "
                        f"{hparams.game}'s frames are pictures: set scale_observations=False")
    if is_atari_game(hparams.game):
        if gym_wrappers:
            return gym_atari_batch_env(hparams.game, num_envs, gym_wrappers, **atari_settings(hparams))
        return AtariBatchEnv(hparams.game, num_envs, **atari_settings(hparams))
    if minatar.is_minatar_game(hparams.game):  # one frame per agent step: the cap counts steps
        return minatar.MinAtarBatchEnv(hparams.game, num_envs, sticky_actions=hparams.sticky_actions,
                                       max_episode_steps=hparams.max_episode_frames)
    return GymBatchEnv(hparams.game, num_envs, wrappers=gym_wrappers, scale_observations=hparams.scale_observations,
                       **(dict(render_mode="rgb_array") if render else {}))
