"""Trains a policy with a model-free learner (PPO) on a real environment.

    python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_base --hparams=game=pong --output_dir=DIR

OUTPUT_DIR gets hparams.json, operative_config.gin, checkpoints/ (the last few), TensorBoard
events in train/ and eval/, and the final policy as a SavedModel in policy/. Rerunning the same
command after the process was killed resumes from the last checkpoint.
"""

import os

import keras
import tensorflow as tf
from absl import flags, logging

from rlkit import cli
from rlkit.checkpoints import restore_latest
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import make_batch_env
from rlkit.rl import evaluation
from rlkit.rl.learner import build_learner, check_learner
from rlkit.rl.on_policy import train_on_policy
from rlkit.summaries import write_summaries


def train(hparams, output_dir, seed):
    """Runs (or resumes) training as `hparams` describe; returns the last evaluation
    ({eval grid cell: summary}) with the iterations and env steps done."""
    keras.utils.set_random_seed(seed)
    env = make_batch_env(hparams, hparams.num_envs)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed)
    iterations = tf.Variable(0, dtype=tf.int64)
    env_steps = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(iteration=iterations, env_steps=env_steps, **learner.checkpointables())
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(output_dir, "checkpoints"),
                                         max_to_keep=hparams.keep_checkpoints)
    if restore_latest(checkpoint, manager, f"the {hparams.base_algo} learner"):
        logging.info("Resumed from %s at iteration %d, %d env steps", manager.latest_checkpoint,
                     int(iterations), int(env_steps))
    cli.write_operative_config(output_dir)

    # Whole iterations within the budget: num_env_steps is never exceeded.
    total_iterations = max(1, hparams.num_env_steps // (hparams.num_envs * learner.hparams.rollout_length))
    eval_writer = tf.summary.create_file_writer(os.path.join(output_dir, "eval"))
    last_eval = {}

    def evaluate(iteration, metrics):
        if iteration % hparams.eval_every_iterations and iteration != total_iterations:
            return
        results, _ = evaluation.evaluate_policy(hparams, learner.act, seed)
        write_summaries(eval_writer, int(env_steps), evaluation.policy_scalars(results))
        last_eval.update(results)

    train_on_policy(learner, FrameStack(env, hparams.frame_stack_size), iterations, env_steps, total_iterations,
                    total_iterations, seed, tf.summary.create_file_writer(os.path.join(output_dir, "train")),
                    save_checkpoint=lambda: manager.save(checkpoint_number=int(iterations)),
                    checkpoint_every=hparams.checkpoint_every_iterations, after_iteration=evaluate)
    learner.export(os.path.join(output_dir, "policy"))
    env.close()
    logging.info("Done: %d iterations, %d env steps; policy exported to %s", int(iterations),
                 int(env_steps), os.path.join(output_dir, "policy"))
    return dict(eval=last_eval, iterations=int(iterations), env_steps=int(env_steps))


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("rlmf_base", "Run directory: checkpoints, TensorBoard events, exported policy.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    with cli.start_run(FLAGS, check=check_learner) as (hparams, output_dir):
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    cli.run(main)
