"""Rollout loops shared by trainers, the evaluator and the player: plain functions over a
frame-stacked BatchEnv and an `act` function."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class Rollout:
    """`num_steps` steps of N envs, time first."""
    observations: np.ndarray  # [T, N, ...] what the actions were taken on
    actions: np.ndarray       # [T, N]
    log_probs: np.ndarray     # [T, N] of the actions under the acting policy
    values: np.ndarray        # [T, N]
    rewards: np.ndarray       # [T, N] clipped rewards for learning
    dones: np.ndarray         # [T, N]
    last_values: np.ndarray   # [N] value of the observation after the last step
    restarted: bool = False   # the envs were reset before it: it continues no earlier rollout


@dataclasses.dataclass
class EpisodeStats:
    """Episodes that ended during a rollout."""
    returns: list = dataclasses.field(default_factory=list)          # unclipped
    clipped_returns: list = dataclasses.field(default_factory=list)
    lengths: list = dataclasses.field(default_factory=list)
    # run_episodes(record_envs=n): per recorded env, (frames [T, H, W, C], raw rewards [T]).
    recordings: list = dataclasses.field(default_factory=list)

    def add(self, step):
        done = step.done
        self.returns += step.episode_return[done].tolist()
        self.clipped_returns += step.episode_clipped_return[done].tolist()
        self.lengths += step.episode_length[done].tolist()


def collect_rollout(env, observation, act, num_steps, on_step=None):
    """Steps a FrameStack `env` from `observation` with `act(observation) -> (actions, log_probs, values)`.

    `act` is called once more on the final observation for its value; `on_step(observation,
    actions, step)`, if given, sees every step (to store it). Returns (Rollout, the next
    observation, EpisodeStats of episodes that ended).
    """
    columns = {name: [] for name in ("observations", "actions", "log_probs", "values", "rewards", "dones")}
    stats = EpisodeStats()
    for _ in range(num_steps):
        actions, log_probs, values = act(observation)
        next_observation, step = env.step(actions)
        if on_step is not None:
            on_step(observation, actions, step)
        for name, value in zip(columns, (observation, actions, log_probs, values, step.reward, step.done)):
            columns[name].append(value)
        stats.add(step)
        observation = next_observation
    _, _, last_values = act(observation)
    rollout = Rollout(**{name: np.stack(values) for name, values in columns.items()},
                      last_values=last_values)
    return rollout, observation, stats


def newest_pictures(env, observation, count):
    """What the first `count` envs of a FrameStack `env` show now: the env's own drawing where it
    makes one (a gymnasium env made with render=True), else its newest frame of `observation`."""
    rendered = env.env.render()
    return rendered[:count] if rendered is not None else observation[:count, -1]


def run_episodes(env, act, max_steps, seed=None, record_envs=0):
    """Runs one episode in each env of a FrameStack `env` with `act(observation) -> actions`.

    An env whose episode ends stops counting; after `max_steps` agent steps the episodes still
    running end there and report the return so far. Returns EpisodeStats, one entry per env,
    with the frames and rewards of the first `record_envs` envs' episodes (the env's `render()`
    pictures where it draws itself, as a gymnasium env made with render=True does).
    """
    observation = env.reset(seed=seed)
    num_envs = observation.shape[0]
    finished = np.zeros(num_envs, bool)
    returns = np.zeros(num_envs, np.float64)
    clipped = np.zeros(num_envs, np.float64)
    lengths = np.zeros(num_envs, np.int64)
    frames, rewards = [], []
    for _ in range(max_steps):
        if record_envs:
            frames.append(newest_pictures(env, observation, record_envs))
        observation, step = env.step(act(observation))
        running = ~finished
        returns += np.where(running, step.raw_reward, 0)
        clipped += np.where(running, step.reward, 0)
        lengths += running
        if record_envs:
            rewards.append(step.raw_reward[:record_envs])
        finished |= step.done
        if finished.all():
            break
    recordings = [(np.stack(frames)[:lengths[i], i], np.stack(rewards)[:lengths[i], i])
                  for i in range(min(record_envs, num_envs))]
    return EpisodeStats(returns.tolist(), clipped.tolist(), lengths.tolist(), recordings)
