"""The off-policy training loop: acting into a replay memory, learner updates on sampled
batches, target-network syncs, checkpoints, summaries and progress, in one function.

It drives DQN and NAF in `trainer_model_free` and DQN inside the world model in the SimPLe loop
(`rlmb_dqn_base`), beside `rlkit.rl.loops.on_policy.train_on_policy` for PPO.
Callers pass what differs: the env, the replay memory, the counter they checkpoint, what
happens after each env step (evaluation).
"""

import collections
import dataclasses

import numpy as np
from absl import logging

from rlkit.progress import Progress
from rlkit.rl.learners.schedules import learning_rate_at
from rlkit.summaries import write_summaries


def importance_exponent_at(hparams, progress):
    """Prioritized replay's beta, annealed linearly from importance_exponent_start to 1 over the
    run (Schaul et al. 2016)."""
    start = hparams.importance_exponent_start
    return start + min(1.0, progress) * (1.0 - start)


def train_off_policy(learner, env, replay, env_steps, target_steps, total_steps, seed, writer,
                     save_checkpoint=None, after_step=None, log_every_steps=10_000, restart_every=None):
    """Acts with `learner` on `env` into `replay` and updates it until `env_steps` reaches
    `target_steps`; returns the metrics of the last update ({} if none ran).

    env: a FrameStack. env_steps: a tf.Variable the caller checkpoints, the x axis of the
    summaries. total_steps: the run's length, over which the learning rate, epsilon and the
    importance exponent run. Learning starts after `learning_starts` steps; every
    `update_period` agent steps (summed over the envs) one batch is sampled and learned from,
    and every `target_update_period` agent steps the target network is updated (`sync_target`).
    The learner's `exploration_at(steps)` (DQN's epsilon, NAF's noise scale) goes to `explore`.
    save_checkpoint() runs whenever the replay writes a shard (so the stored replay and the
    counters resume together) and at the end; after_step(env_steps) after every env step.
    restart_every: reset `env` every that many env steps (the SimPLe loop's fixed-length rollouts
    inside a world model); the step before a restart is stored as a time-limit cut, not an end.
    """
    hparams = learner.hparams
    num_envs = env.env.num_envs
    done_steps = int(env_steps)
    rng = np.random.default_rng(seed + done_steps)  # replay sampling, seeded anew on resume
    progress = Progress(target_steps, done_steps)
    recent_returns = collections.deque(maxlen=100)
    recent_metrics = []
    owed_updates = 0.0
    # Env state is not checkpointed: a resumed run starts new episodes, seeded anew.
    observation = env.reset(seed=seed + done_steps)
    metrics, rollout_steps, learning_rate = {}, 0, None
    while done_steps < target_steps:
        exploration = learner.exploration_at(done_steps)
        actions = learner.explore(observation, exploration)
        next_observation, step = env.step(actions)
        rollout_steps += 1
        restart = restart_every is not None and rollout_steps == restart_every
        if restart:  # nothing bootstraps from the frame after a restart's cut
            step = dataclasses.replace(step, truncated=np.ones_like(step.truncated))
        wrote_shard = replay.add(observation[:, -1], actions, step)
        observation = next_observation
        if restart:
            observation, rollout_steps = env.reset(seed=seed + done_steps + num_envs), 0
        previous_steps, done_steps = done_steps, done_steps + num_envs
        env_steps.assign(done_steps)
        recent_returns.extend(step.episode_return[step.done].tolist())

        if done_steps >= hparams.learning_starts and len(replay):
            beta = importance_exponent_at(hparams, done_steps / total_steps)
            owed_updates += num_envs / hparams.update_period
            while owed_updates >= 1:
                if learning_rate != (learning_rate := learning_rate_at(hparams, done_steps / total_steps)):
                    learner.set_learning_rate(learning_rate)  # a TensorFlow op: only when it changes
                batch = replay.sample(rng, hparams.batch_size, importance_exponent=beta)
                metrics = learner.update(batch)
                td_errors = metrics.pop("td_errors")
                if replay.prioritized:
                    replay.update_priorities(batch["indices"], td_errors)
                recent_metrics.append(metrics)
                owed_updates -= 1
        if done_steps // hparams.target_update_period > previous_steps // hparams.target_update_period:
            learner.sync_target()

        if done_steps // log_every_steps > previous_steps // log_every_steps or done_steps >= target_steps:
            scalars = {"charts/exploration": exploration, "charts/steps_per_second": progress.rate(done_steps),
                       "charts/replay_transitions": len(replay)}
            if recent_metrics:
                scalars.update({f"losses/{name}": float(np.mean([m[name] for m in recent_metrics]))
                                for name in recent_metrics[0]})
            if recent_returns:
                scalars["charts/episodic_return"] = float(np.mean(recent_returns))
            write_summaries(writer, done_steps, scalars)
            returns = dict(mean_return=float(np.mean(recent_returns))) if recent_returns else {}
            loss = dict(loss=scalars["losses/loss"]) if recent_metrics else {}
            logging.info(progress.line(done_steps, exploration=round(exploration, 3), **returns, **loss))
            recent_metrics = []
        if done_steps >= target_steps:
            replay.flush()
        if save_checkpoint is not None and (wrote_shard or done_steps >= target_steps):
            save_checkpoint()
        if after_step is not None:
            after_step(done_steps)
    return metrics
