"""MinAtar (Young & Tian 2019) behind the BatchEnv interface: miniature Atari on a CPU.

Five games on a 10x10 grid whose channels are binary (paddle, ball, trail, bricks, ...). rlkit
names them `minatar/breakout` (or by their gymnasium ids, `MinAtar/Breakout-v1`: v1 takes the
game's minimal action set, v0 all six) and hands their frames on as uint8 0 or 255, so policies,
storage and videos treat them as any image frames; world models predict each channel as one of
2 classes (`PIXEL_VALUES`). The games keep MinAtar's own settings: sticky actions with p=0.1
(`sticky_actions=True`, env_minatar's default), difficulty ramping, one frame per agent step,
and rewards clipped to {-1, 0, 1} for learning as on Atari (only Seaquest's surfacing bonus, up
to 10, is ever larger).

MinAtar is GPL-3.0 and optional: `pip install -e ".[minatar]"`.
"""

import re

import gymnasium as gym
import numpy as np

from rlkit.data_generators.batch_env import BatchEnv
from rlkit.errors import UserError

GAMES = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")
PIXEL_VALUES = 2  # each channel is on or off
ON = 255  # the uint8 value of a channel that is on
STICKY_ACTION_PROBABILITY = 0.1  # MinAtar's default, as in its paper
# MinAtar's full action set; the minimal sets (v1) are subsets of it.
ACTION_MEANINGS = ("NOOP", "LEFT", "UP", "RIGHT", "DOWN", "FIRE")

_GYMNASIUM_ID = re.compile(r"^MinAtar/(\w+)-v([01])$")


def minatar_games():
    """rlkit's names of the MinAtar games: minatar/asterix, ..."""
    return [f"minatar/{game}" for game in GAMES]


def gymnasium_id(game):
    return f"MinAtar/{game.title().replace('_', '')}-v1"


def parse_game(name):
    """(game, minimal action set?) for a MinAtar name (`minatar/breakout`, `MinAtar/Breakout-v1`),
    None for any other name."""
    if name.startswith("minatar/") and name[len("minatar/"):] in GAMES:
        return name[len("minatar/"):], True
    match = _GYMNASIUM_ID.match(name)
    if match:
        for game in GAMES:
            if game.title().replace("_", "") == match.group(1):
                return game, match.group(2) == "1"
    return None


def is_minatar_game(name):
    return parse_game(name) is not None


def _environment_class():
    try:
        from minatar import Environment  # without its display's imports (rlkit.startup)
    except ImportError:
        raise UserError("the MinAtar games need the minatar package: pip install -e \".[minatar]\"") from None
    return Environment


def frame_shape(name):
    """(10, 10, channels) of a MinAtar game's frames."""
    game, _ = parse_game(name)
    return tuple(_environment_class()(game).state_shape())


def channel_names(name):
    """The objects a MinAtar game's channels hold, in channel order (paddle, ball, trail, brick)."""
    game, _ = parse_game(name)
    channels = _environment_class()(game).env.channels
    return sorted(channels, key=channels.get)


class MinAtarBatchEnv(BatchEnv):
    """N copies of a MinAtar game, stepped in a Python loop (each step is microseconds)."""

    def __init__(self, name, num_envs, sticky_actions=True, max_episode_steps=None):
        game, minimal = parse_game(name)
        environment = _environment_class()
        sticky = STICKY_ACTION_PROBABILITY if sticky_actions else 0.0
        self._games = [environment(game, sticky_action_prob=sticky) for _ in range(num_envs)]
        self._actions = self._games[0].minimal_action_set() if minimal else list(range(len(ACTION_MEANINGS)))
        self._max_episode_steps = max_episode_steps
        self._steps = np.zeros(num_envs, np.int64)
        shape = tuple(self._games[0].state_shape())
        super().__init__(num_envs, gym.spaces.Box(0, ON, shape, np.uint8), gym.spaces.Discrete(len(self._actions)),
                         [ACTION_MEANINGS[a] for a in self._actions], clip_rewards=True)

    def _frames(self):
        return np.stack([g.state() for g in self._games]).astype(np.uint8) * ON

    def _reset(self, seed):
        for i, game in enumerate(self._games):
            # Unseeded, MinAtar draws from numpy's global generator: seed each game from it instead.
            game.seed(seed + i if seed is not None else int(np.random.randint(2**31 - 1)))
            game.reset()
        self._steps[:] = 0
        return self._frames()

    def _step(self, actions):
        rewards = np.zeros(self.num_envs, np.float32)
        terminated = np.zeros(self.num_envs, bool)
        for i, (game, action) in enumerate(zip(self._games, actions)):
            rewards[i], terminated[i] = game.act(self._actions[int(action)])
        self._steps += 1
        truncated = ~terminated & (self._steps >= self._max_episode_steps) if self._max_episode_steps else \
            np.zeros(self.num_envs, bool)
        for i in np.flatnonzero(terminated | truncated):
            self._games[i].reset()
            self._steps[i] = 0
        return self._frames(), rewards, terminated, truncated
