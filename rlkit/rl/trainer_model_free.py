"""Trains a policy with PPO on a real environment.

    python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_base --hparams=game=pong --output_dir=DIR

OUTPUT_DIR gets hparams.json, operative_config.gin, checkpoints/ (the last few), TensorBoard
events in train/ and eval/, and the final policy as a SavedModel in policy/. Rerunning the same
command after the process was killed resumes from the last checkpoint.
"""

import collections
import os

import keras
import numpy as np
import tensorflow as tf
from absl import flags, logging

from rlkit import cli, gcs
from rlkit.checkpoints import restore_latest
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import check_game, make_batch_env
from rlkit.hparams import referenced_hparams
from rlkit.models.registry import get_model
from rlkit.progress import Progress
from rlkit.summaries import write_summaries
from rlkit.rl.policy_export import export_policy
from rlkit.rl.ppo import build_learner, learning_rate_at
from rlkit.rl.rollout import collect_rollout, run_episodes

EVAL_TEMPERATURES = {"greedy": 0.0, "sampled": 1.0}


def evaluate(learner, eval_env, max_steps, seed):
    """Mean unclipped and clipped return of one episode per eval env, greedy and sampled."""
    results = {}
    for name, temperature in EVAL_TEMPERATURES.items():
        stats = run_episodes(eval_env, lambda obs: learner.act(obs, temperature)[0], max_steps, seed)
        results[f"eval/{name}_return"] = float(np.mean(stats.returns))
        results[f"eval/{name}_clipped_return"] = float(np.mean(stats.clipped_returns))
        results[f"eval/{name}_length"] = float(np.mean(stats.lengths))
    return results


def train(hparams, output_dir, seed):
    """Runs (or resumes) PPO training as `hparams` describe; returns the last eval results."""
    keras.utils.set_random_seed(seed)
    env = make_batch_env(hparams, hparams.num_envs)
    eval_env = FrameStack(make_batch_env(hparams, hparams.eval_num_episodes), hparams.frame_stack_size)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed)
    ppo = learner.hparams
    iteration = tf.Variable(0, dtype=tf.int64)
    env_steps = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(iteration=iteration, env_steps=env_steps, **learner.checkpointables())
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(output_dir, "checkpoints"),
                                         max_to_keep=hparams.keep_checkpoints)
    if restore_latest(checkpoint, manager, f"network {ppo.policy_network!r}"):
        logging.info("Resumed from %s at iteration %d, %d env steps", manager.latest_checkpoint,
                     int(iteration), int(env_steps))
    cli.write_operative_config(output_dir)

    steps_per_iteration = hparams.num_envs * ppo.rollout_length
    # Whole iterations within the budget: num_env_steps is never exceeded.
    total_iterations = max(1, hparams.num_env_steps // steps_per_iteration)
    train_writer = tf.summary.create_file_writer(os.path.join(output_dir, "train"))
    eval_writer = tf.summary.create_file_writer(os.path.join(output_dir, "eval"))
    progress = Progress(total_iterations * steps_per_iteration, int(env_steps))
    recent_returns = collections.deque(maxlen=100)
    stacked_env = FrameStack(env, hparams.frame_stack_size)
    # A resumed run starts new episodes: the env state is not part of the checkpoint.
    observation = stacked_env.reset(seed=seed + int(iteration))
    eval_results = {}
    while int(iteration) < total_iterations:
        learning_rate = learning_rate_at(ppo, int(iteration) / total_iterations)
        learner.set_learning_rate(learning_rate)
        rollout, observation, episodes = collect_rollout(stacked_env, observation, learner.act,
                                                         ppo.rollout_length)
        metrics = learner.update(rollout)
        iteration.assign_add(1)
        env_steps.assign_add(steps_per_iteration)
        done_iterations, done_steps = int(iteration), int(env_steps)
        recent_returns.extend(episodes.returns)

        scalars = {f"losses/{name}": value for name, value in metrics.items()}
        scalars["charts/learning_rate"] = learning_rate
        scalars["charts/env_steps_per_second"] = progress.rate(done_steps)
        if episodes.returns:
            scalars["episode/return"] = float(np.mean(episodes.returns))
            scalars["episode/clipped_return"] = float(np.mean(episodes.clipped_returns))
            scalars["episode/length"] = float(np.mean(episodes.lengths))
        write_summaries(train_writer, done_steps, scalars)
        mean_return = float(np.mean(recent_returns)) if recent_returns else float("nan")
        logging.info(progress.line(done_steps, iteration=f"{done_iterations}/{total_iterations}",
                                   mean_return=mean_return, loss=metrics["loss"]))

        last = done_iterations == total_iterations
        if done_iterations % hparams.eval_every_iterations == 0 or last:
            eval_results = evaluate(learner, eval_env, hparams.eval_max_steps, seed)
            write_summaries(eval_writer, done_steps, eval_results)
            logging.info("Eval at %d steps: %s", done_steps,
                         ", ".join(f"{k} {v:.2f}" for k, v in eval_results.items()))
        if done_iterations % hparams.checkpoint_every_iterations == 0 or last:
            manager.save(checkpoint_number=done_iterations)

    export_policy(learner.network, env.action_space, (hparams.frame_stack_size,) + tuple(env.observation_shape),
                  env.observation_space.dtype, os.path.join(output_dir, "policy"))
    env.close()
    eval_env.env.close()
    logging.info("Done: %d iterations, %d env steps; policy exported to %s", int(iteration),
                 int(env_steps), os.path.join(output_dir, "policy"))
    return dict(eval_results, iterations=int(iteration), env_steps=int(env_steps))


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_hparams_flags("rlmf_base")
    cli.define_gin_flags()
    flags.DEFINE_string("output_dir", None, "Run directory: checkpoints, TensorBoard events, exported policy.")
    flags.DEFINE_integer("seed", 0, "Seed of the envs, the network initialisation and the sampling.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    hparams = cli.load_hparams(FLAGS.hparams_set, FLAGS.hparams)
    # Names are checked before anything is written, so a typo leaves no run dir behind.
    check_game(hparams.game)
    get_model(referenced_hparams(hparams, "ppo").policy_network)
    with gcs.local_output(FLAGS.output_dir) as output_dir:  # gs:// outputs are uploaded as written
        cli.prepare_output_dir(output_dir, hparams)
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    cli.run(main)
