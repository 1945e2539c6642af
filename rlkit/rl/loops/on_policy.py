"""The on-policy training loop: rollouts, learner updates, the learning-rate schedule,
checkpoints, summaries and progress, in one function.

It drives PPO in `trainer_model_free` (a real env), inside the world model in the SimPLe loop
(a simulated env, restarted from real frames before every rollout) and on the real env during
the loop's first collection (storing every step). Callers pass what differs: the env, the
counters they checkpoint, what happens after each iteration.
"""

import collections

import numpy as np
from absl import logging

from rlkit.progress import Progress
from rlkit.rl.learners.schedules import learning_rate_at
from rlkit.rl.loops.rollout import collect_rollout
from rlkit.summaries import write_summaries


def train_on_policy(learner, env, iterations, env_steps, target_iterations, total_iterations, seed, writer,
                    restart_every_rollout=False, on_step=None, save_checkpoint=None, checkpoint_every=0,
                    after_iteration=None, log_every=1, rollout_length=None, workers=None):
    """Collects rollouts with `learner` on `env` and updates it until `iterations` reaches
    `target_iterations`; returns the metrics of the last update ({} if none ran).

    env: a FrameStack. iterations, env_steps: tf.Variables the caller checkpoints; env_steps is
    the x axis of the summaries. total_iterations: the length of the whole run, over which the
    learning-rate schedule runs (a run trained in parts, epoch by epoch, gives all parts).
    restart_every_rollout: reset `env` before every rollout (SimPLe's simulated rollouts);
    otherwise it is reset once and runs on. on_step(observation, actions, step) sees every
    step (to store it). save_checkpoint() runs every `checkpoint_every` iterations and at the
    target; after_iteration(iteration, metrics) after every iteration (evaluation, shards).
    rollout_length: steps per env in a rollout, if not the learner's own (the loop's real-env
    collections use real_rollout_length). workers (rlkit.rl.loops.workers): Ray actors collect the
    rollouts on their envs with the learner's weights; `env` is then unused.
    """
    rollout_length = rollout_length or learner.hparams.rollout_length
    steps_per_iteration = (workers.num_envs if workers is not None else env.env.num_envs) * rollout_length
    done_steps = int(env_steps)
    progress = Progress(done_steps + (target_iterations - int(iterations)) * steps_per_iteration, done_steps)
    recent_returns = collections.deque(maxlen=100)
    observation, started, metrics = None, False, {}
    while int(iterations) < target_iterations:
        learning_rate = learning_rate_at(learner.hparams, int(iterations) / total_iterations)
        learner.set_learning_rate(learning_rate)
        restarted = not started or restart_every_rollout
        started = True
        # Env state is not checkpointed: a resumed run starts new episodes, seeded anew.
        reset_seed = seed + int(iterations) if restarted else None
        if workers is not None:
            rollout, episodes = workers.collect_rollout(rollout_length, reset_seed, on_step)
        elif restart_every_rollout and on_step is None and hasattr(env.env, "compiled_rollout"):
            # The world model's env: the same rollout as below, as one TensorFlow call.
            rollout, observation, episodes = env.env.compiled_rollout(learner.policy, env.k, rollout_length,
                                                                      reset_seed)
        else:
            if restarted:
                observation = env.reset(seed=reset_seed)
            rollout, observation, episodes = collect_rollout(env, observation, learner.act_for_rollout,
                                                             rollout_length, on_step)
        rollout.restarted = restarted
        # {} when the learner waits for more data (REINFORCE until an episode ends).
        update_metrics = learner.update(rollout)
        metrics = update_metrics or metrics
        iterations.assign_add(1)
        env_steps.assign_add(steps_per_iteration)
        iteration, done_steps = int(iterations), int(env_steps)
        recent_returns.extend(episodes.returns)

        scalars = {f"losses/{name}": value for name, value in update_metrics.items()}
        scalars["charts/learning_rate"] = learning_rate
        scalars["charts/steps_per_second"] = progress.rate(done_steps)
        scalars["charts/rollout_reward"] = float(rollout.rewards.sum(axis=0).mean())
        if episodes.returns:
            scalars["charts/episodic_return"] = float(np.mean(episodes.returns))
            scalars["charts/episodic_clipped_return"] = float(np.mean(episodes.clipped_returns))
            scalars["charts/episodic_length"] = float(np.mean(episodes.lengths))
        write_summaries(writer, done_steps, scalars)
        last = iteration == target_iterations
        if iteration % log_every == 0 or last:
            returns = dict(mean_return=float(np.mean(recent_returns))) if recent_returns else {}
            losses = dict(loss=metrics["loss"]) if "loss" in metrics else {}
            logging.info(progress.line(done_steps, iteration=f"{iteration}/{target_iterations}", **returns,
                                       rollout_reward=scalars["charts/rollout_reward"], **losses))
        if save_checkpoint is not None and (last or (checkpoint_every and iteration % checkpoint_every == 0)):
            save_checkpoint()
        if after_iteration is not None:
            after_iteration(iteration, metrics)
    return metrics
