"""Ray actors that run a run's real envs: agents feed a trainer.

With `real_num_workers` = K > 0, the trainers split their real envs over K actors. Each holds
its share of the batched envs (env i keeps its index, so it gets the seed it would get in one
process) and a copy of the learner's acting network. For each collection the learner sends its
current weights; every actor steps its envs with them and sends back whole trajectories, which
the learner merges along the env axis and uses as it uses its own env's:

    workers = start_workers(hparams, learner, num_envs, seed)      # None when real_num_workers == 0
    rollout, episodes = workers.collect_rollout(num_steps, reset_seed, on_step)   # on-policy training
    collect_experience(None, ..., steps_from=workers.steps)                       # storage shards
    evaluate_policy(hparams, learner.act, seed, workers=workers)                  # evaluation

So results equal the single-process path's in distribution (the same envs and seeds; the
sampling's random streams are the actors' own), and the data on disk has the same layout.
Nothing here imports Ray until workers are started.
"""

import dataclasses
import logging as std_logging
import os

import numpy as np

from rlkit.errors import UserError
from rlkit.hparams import HParams
from rlkit.rl.loops.rollout import EpisodeStats, Rollout

RAY_INSTALL = 'pip install -e ".[ray]"'


def import_ray(needed_for):
    """The ray module, or a UserError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError(f"{needed_for} needs Ray, which is not installed: {RAY_INSTALL}") from None
    return ray


def init_ray(needed_for, address=None, num_cpus=None):
    """Connects to the Ray cluster at `address` (or $RAY_ADDRESS), or starts a local one (this
    machine's CPUs, or `num_cpus`); does nothing where Ray is already up (inside a search trial)."""
    ray = import_ray(needed_for)
    # Ray's own warnings about its defaults (token auth, storage) would bury rlkit's lines.
    std_logging.getLogger("ray").setLevel(std_logging.ERROR)
    if not ray.is_initialized():
        # A local Ray runs its workers at nice 15 unless told otherwise; a trial or env worker is the
        # work here, and beside other processes it then starves (TensorFlow's import took 388 s in a
        # worker on a busy 2-core machine, against 10 s at nice 0). A cluster's own setting stands.
        os.environ.setdefault("RAY_worker_niceness", "0")
        try:
            ray.init(address=address, num_cpus=None if address else num_cpus, include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        except ConnectionError as e:
            raise UserError(f"cannot reach the Ray cluster at {address!r} ({e}): check --ray_address, or drop it to "
                            "run on this machine") from None
    return ray


def split_envs(num_envs, num_workers):
    """[(first env index, env count)] of each worker: as even as it gets, none empty."""
    if num_workers > num_envs:
        raise UserError(f"real_num_workers={num_workers} is more than the {num_envs} real envs to share out: "
                        f"use at most {num_envs} workers")
    sizes = [num_envs // num_workers + (i < num_envs % num_workers) for i in range(num_workers)]
    return [(sum(sizes[:i]), size) for i, size in enumerate(sizes)]


def merge_steps(steps):
    """One Step of all envs from the workers' Steps of their envs (the next observations are left
    out: trajectories carry them once, as the next step's frames)."""
    step_type = type(steps[0])
    return step_type(**{field.name: None if field.name == "observation" else
                        np.concatenate([getattr(step, field.name) for step in steps])
                        for field in dataclasses.fields(step_type)})


def merge_episodes(stats):
    merged = EpisodeStats()
    for part in stats:
        merged.returns += part.returns
        merged.clipped_returns += part.clipped_returns
        merged.lengths += part.lengths
    return merged


class EnvWorker:
    """One actor: `num_envs` real envs (indices first_env...) and a copy of the learner, built
    once the first weights arrive (a random collection sends none)."""

    def __init__(self, hparams_json, num_envs, first_env, seed):
        from rlkit.data_generators.batch_env import FrameStack
        from rlkit.data_generators.make_env import make_batch_env

        self.hparams = HParams.from_json(hparams_json)
        self.first_env, self.seed = first_env, seed
        self.env = make_batch_env(self.hparams, num_envs)
        self.stacked = FrameStack(self.env, self.hparams.frame_stack_size)
        self.learner = None
        self.observation = None  # where the last rollout left the envs
        self.steps = None        # the collection in progress (EnvSteps)

    def _policy(self, weights):
        if weights is None:
            return None
        if self.learner is None:
            from rlkit.rl.learners.learner import build_learner
            self.learner = build_learner(self.hparams, self.env.observation_space, self.env.action_space,
                                         self.seed + 7_919 * (self.first_env + 1))
        self.learner.network.set_weights(weights)
        return self.learner

    def collect_rollout(self, weights, num_steps, reset_seed, record_steps):
        """(Rollout, EpisodeStats, [(frames, actions, Step)] if record_steps) of the envs' next steps."""
        from rlkit.rl.loops.rollout import collect_rollout

        learner = self._policy(weights)
        if reset_seed is not None or self.observation is None:
            self.observation = self.stacked.reset(seed=(self.seed if reset_seed is None else reset_seed)
                                                  + self.first_env)
        records = []
        on_step = (lambda observation, actions, step: records.append(
            (observation[:, -1], actions, dataclasses.replace(step, observation=None)))) if record_steps else None
        rollout, self.observation, episodes = collect_rollout(self.stacked, self.observation, learner.act_for_rollout,
                                                              num_steps, on_step)
        return rollout, episodes, records

    def start_steps(self, weights, seed):
        """Begins a storage collection: the envs reset with `seed` (+ their index), acting with
        the policy (weights) or at random."""
        from rlkit.data_generators.experience import EnvSteps

        learner = self._policy(weights)
        self.steps = EnvSteps(self.env, learner.act if learner else None, self.hparams.frame_stack_size,
                              seed + self.first_env)

    def take(self, num_steps):
        return [(frames, actions, dataclasses.replace(step, observation=None))
                for frames, actions, step in self.steps.take(num_steps)]

    def run_episodes(self, weights, env_hparams_json, num_envs, first_env, temperature, max_steps, seed):
        """One episode in each of `num_envs` fresh envs set up as `env_hparams` (an evaluation cell)."""
        from rlkit.data_generators.batch_env import FrameStack
        from rlkit.data_generators.make_env import make_batch_env
        from rlkit.rl.loops.rollout import run_episodes

        learner = self._policy(weights)
        with make_batch_env(HParams.from_json(env_hparams_json), num_envs) as env:
            return run_episodes(FrameStack(env, self.hparams.frame_stack_size),
                                lambda observation: learner.act(observation, temperature), max_steps,
                                seed + first_env)

    def close(self):
        self.env.close()


class Workers:
    """The driver's side: the actors, the learner whose weights they act with, and the merging."""

    def __init__(self, ray, hparams, learner, num_envs, num_workers, seed):
        self.ray, self.hparams, self.learner, self.num_envs = ray, hparams, learner, num_envs
        self.shares = split_envs(num_envs, num_workers)
        actor = ray.remote(num_cpus=1)(EnvWorker)
        self.actors = [actor.remote(hparams.to_json(), count, first, seed) for first, count in self.shares]

    def _weights(self, with_policy=True):
        return self.ray.put(self.learner.network.get_weights()) if with_policy else None

    def collect_rollout(self, num_steps, reset_seed=None, on_step=None):
        """A rollout of all envs (their states continue from the last one unless reset_seed is
        given) with the learner's current weights; on_step(observation, actions, step) sees every
        step in order, as collect_rollout's does. Returns (Rollout, EpisodeStats)."""
        weights = self._weights()
        parts = self.ray.get([actor.collect_rollout.remote(weights, num_steps, reset_seed, on_step is not None)
                              for actor in self.actors])
        rollouts = [rollout for rollout, _, _ in parts]
        fields = {name: np.concatenate([getattr(r, name) for r in rollouts], axis=1)
                  for name in ("observations", "actions", "log_probs", "values", "rewards", "dones")}
        rollout = Rollout(**fields, last_values=np.concatenate([r.last_values for r in rollouts]))
        if on_step is not None:
            for t in range(num_steps):
                step = merge_steps([records[t][2] for _, _, records in parts])
                # on_step reads the newest frame of the stack: the rollout holds the whole stacks.
                on_step(rollout.observations[t], rollout.actions[t], step)
        return rollout, merge_episodes([episodes for _, episodes, _ in parts])

    def steps(self, seed, with_policy=True):
        """A source of steps for `collect_experience`: the actors' envs reset with `seed` and
        stepped by the learner's current policy (with_policy) or at random."""
        weights = self._weights(with_policy)
        self.ray.get([actor.start_steps.remote(weights, seed) for actor in self.actors])
        return _RemoteSteps(self)

    def run_episodes(self, env_hparams, num_envs, temperature, max_steps, seed):
        """EpisodeStats of one episode in each of `num_envs` envs (split over the actors), in env order."""
        weights = self._weights()
        shares = split_envs(num_envs, min(len(self.actors), num_envs))
        parts = self.ray.get([actor.run_episodes.remote(weights, env_hparams.to_json(), count, first, temperature,
                                                        max_steps, seed)
                              for actor, (first, count) in zip(self.actors, shares)])
        return merge_episodes(parts)

    def close(self):
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


class _RemoteSteps:
    """`collect_experience`'s steps from the actors, merged per step along the env axis."""

    def __init__(self, workers):
        self.workers, self.num_envs = workers, workers.num_envs

    def take(self, num_steps):
        parts = self.workers.ray.get([actor.take.remote(num_steps) for actor in self.workers.actors])
        return [(np.concatenate([part[t][0] for part in parts]), np.concatenate([part[t][1] for part in parts]),
                 merge_steps([part[t][2] for part in parts]))
                for t in range(num_steps)]


def check_workers(hparams, num_envs):
    """What the trainers check before writing anything: with real_num_workers > 0, Ray is
    installed and each worker gets at least one of the `num_envs` real envs."""
    num_workers = hparams.get("real_num_workers", 0)
    if num_workers:
        split_envs(num_envs, num_workers)
        import_ray(f"real_num_workers={num_workers}")


def start_workers(hparams, learner, num_envs, seed):
    """Workers for `num_envs` real envs when hparams.real_num_workers > 0, else None (and Ray is
    never imported)."""
    num_workers = hparams.get("real_num_workers", 0)
    if not num_workers:
        return None
    split_envs(num_envs, num_workers)  # refuses more workers than envs before Ray starts
    ray = init_ray(f"real_num_workers={num_workers}")
    return Workers(ray, hparams, learner, num_envs, num_workers, seed)
