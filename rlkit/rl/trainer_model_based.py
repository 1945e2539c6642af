"""The SimPLe loop: real experience -> world model -> PPO inside the world model, repeated.

    python -m rlkit.rl.trainer_model_based --loop_hparams_set=rlmb_base_stochastic_discrete \
        --loop_hparams=game=pong --output_dir=DIR

First a real collection (random actions, or PPO learning on the real env) fills data/epoch_000. Then
every epoch K of `epochs`:

1. world model: trained on all real data so far, to a cumulative step target;
2. policy: PPO inside the world model, `simulated_ppo_iterations` rollouts of
   `ppo_rollout_length` steps on `simulated_num_envs` envs started from real frames;
   exported to policy/epoch_K;
3. collection: new real data with the current policy into data/epoch_{K+1};
4. evaluation: the policy on the real env (eval_metrics/epoch_K.json) and the world model's
   reward accuracy on the data it has not been trained on yet (data/epoch_{K+1}).

OUTPUT_DIR holds data/, world_model/ (checkpoints; TensorBoard train/, eval/, dream/),
policy/ (epoch_K SavedModels, checkpoints/, TensorBoard train/) and eval_metrics/ (JSON per
epoch, TensorBoard). Each stage picks up from what is on disk, so rerunning the same command
after a kill continues at the stage where the run stopped: whole data shards are kept, the
world model and the policy resume from their checkpoints, finished evaluations are kept.
"""

import contextlib
import json
import math
import os
import time

import keras
import numpy as np
import tensorflow as tf
from absl import flags, logging

from rlkit import cli, gcs
from rlkit.checkpoints import restore_latest
from rlkit.data_generators import storage
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.experience import collect_experience, stored_steps
from rlkit.data_generators.make_env import check_game, frame_shape, make_batch_env
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.hparams import referenced_hparams
from rlkit.models.registry import get_model
from rlkit.progress import Progress
from rlkit.rl import evaluation
from rlkit.rl.policy_export import export_policy
from rlkit.rl.ppo import build_learner
from rlkit.rl.rollout import collect_rollout
from rlkit.rl.simulated_env import SimulatedBatchEnv
from rlkit.rl.world_model_training import train_world_model, world_model_estimator
from rlkit.summaries import write_summaries


def steps_per_collection(hparams):
    """Real agent steps per collection: the budget split over the epochs, in whole env steps."""
    per_epoch = math.ceil(hparams.num_real_env_steps / hparams.epochs)
    return math.ceil(per_epoch / hparams.real_num_envs) * hparams.real_num_envs


def world_model_target(hparams, epoch):
    """The world model's cumulative global step at the end of `epoch`."""
    train_steps = referenced_hparams(hparams, "world_model").train_steps
    factors = [hparams.longer_training_factor if e in hparams.longer_training_epochs else 1
               for e in range(epoch + 1)]
    return train_steps * sum(factors)


def check_world_model_frames(hparams):
    """The world model must predict frames of the env's shape."""
    world_model = referenced_hparams(hparams, "world_model")
    env_shape = frame_shape(hparams)
    model_shape = (world_model.frame_height, world_model.frame_width, world_model.num_channels)
    if env_shape != model_shape:
        raise UserError(f"the env gives {env_shape} frames but the world model expects {model_shape}: "
                        "set world_model_frame_height/_width/_num_channels to match")


def check_world_model_actions(hparams, action_space):
    """The world model must take every action of the game."""
    world_model = referenced_hparams(hparams, "world_model")
    if action_space.n > world_model.num_actions:
        raise UserError(f"{hparams.game} has {action_space.n} actions but the world model takes "
                        f"{world_model.num_actions}: raise world_model_num_actions")


class PolicyTrainer:
    """The PPO learner of the loop, its counters and checkpoints (policy/checkpoints)."""

    def __init__(self, hparams, env, policy_dir, seed):
        self.hparams = hparams
        self.policy_dir = policy_dir
        self.seed = seed
        self.learner = build_learner(hparams, env.observation_space, env.action_space, seed)
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.action_meanings = env.action_meanings
        self.iteration = tf.Variable(0, dtype=tf.int64)  # PPO iterations inside the world model
        self.simulated_steps = tf.Variable(0, dtype=tf.int64)
        self.real_iterations = tf.Variable(0, dtype=tf.int64)  # PPO iterations on the real env
        self.checkpoint = tf.train.Checkpoint(iteration=self.iteration, simulated_steps=self.simulated_steps,
                                              real_iterations=self.real_iterations,
                                              **self.learner.checkpointables())
        self.manager = tf.train.CheckpointManager(self.checkpoint, os.path.join(policy_dir, "checkpoints"),
                                                  max_to_keep=hparams.keep_checkpoints)
        ppo = self.learner.hparams
        if restore_latest(self.checkpoint, self.manager, f"network {ppo.policy_network!r}"):
            logging.info("Policy resumed at iteration %d (%d simulated steps)", int(self.iteration),
                         int(self.simulated_steps))
        self.writer = tf.summary.create_file_writer(os.path.join(policy_dir, "train"))

    def act(self, observation, temperature):
        return self.learner.act(observation, temperature)[0]

    def sample(self, observation):
        """Actions sampled from the policy: how it collects real data."""
        return self.act(observation, 1.0)

    def save(self):
        self.manager.save(checkpoint_number=int(self.iteration) + int(self.real_iterations))

    def export_path(self, epoch):
        return os.path.join(self.policy_dir, f"epoch_{epoch}")

    def train_in_world_model(self, model, episodes, epoch):
        """PPO inside `model` up to this epoch's iteration target, then the export policy/epoch_K."""
        hparams, ppo = self.hparams, self.learner.hparams
        target = hparams.simulated_ppo_iterations * (epoch + 1)
        if int(self.iteration) < target:
            env = SimulatedBatchEnv(model, episodes, hparams.simulated_num_envs, self.action_space,
                                    self.action_meanings, hparams.simulated_temperature)
            stacked_env = FrameStack(env, hparams.frame_stack_size)
            steps_per_iteration = hparams.simulated_num_envs * ppo.rollout_length
            progress = Progress(target, int(self.iteration), unit="iterations")
            log_every = max(1, hparams.simulated_ppo_iterations // 20)
            self.learner.set_learning_rate(ppo.learning_rate)
            while int(self.iteration) < target:
                # Every rollout starts from new real frames (SimPLe's fixed-length simulated rollouts).
                observation = stacked_env.reset(seed=self.seed + int(self.iteration))
                rollout, _, _ = collect_rollout(stacked_env, observation, self.learner.act, ppo.rollout_length)
                metrics = self.learner.update(rollout)
                self.iteration.assign_add(1)
                self.simulated_steps.assign_add(steps_per_iteration)
                iteration = int(self.iteration)
                rollout_reward = float(rollout.rewards.sum(axis=0).mean())
                scalars = {f"losses/{name}": value for name, value in metrics.items()}
                scalars["simulated/rollout_reward"] = rollout_reward
                scalars["simulated/iterations_per_second"] = progress.rate(iteration)
                write_summaries(self.writer, int(self.simulated_steps), scalars)
                if iteration % log_every == 0 or iteration == target:
                    logging.info(progress.line(iteration, epoch=epoch, rollout_reward=rollout_reward,
                                               loss=metrics["loss"]))
                if iteration % hparams.checkpoint_every_iterations == 0 or iteration == target:
                    self.save()
        if not os.path.exists(self.export_path(epoch)):
            observation_shape = (hparams.frame_stack_size,) + tuple(self.observation_space.shape)
            export_policy(self.learner.network, self.action_space, observation_shape,
                          self.observation_space.dtype, self.export_path(epoch))


def collect_real_with_ppo(hparams, env, data_dir, trainer, seed):
    """The first collection with PPO learning on the real env as it collects (data/epoch_000).

    The learner is checkpointed with every shard, so a killed run resumes both together.
    """
    target = steps_per_collection(hparams)
    done = stored_steps(data_dir, 0)
    if done >= target:
        return
    learner = trainer.learner
    writer = storage.RolloutWriter(data_dir, 0, env.num_envs)
    stacked_env = FrameStack(env, hparams.frame_stack_size)
    observation = stacked_env.reset(seed=seed + done)
    progress = Progress(target, done)
    record = lambda observation, actions, step: writer.add(observation[:, -1], actions, step)  # noqa: E731
    returns = []
    while done < target:
        rollout, observation, episodes = collect_rollout(stacked_env, observation, learner.act,
                                                         learner.hparams.rollout_length, on_step=record)
        metrics = learner.update(rollout)
        trainer.real_iterations.assign_add(1)
        done += rollout.actions.size
        returns += episodes.returns
        if writer.num_buffered_steps >= hparams.shard_steps or done >= target:
            writer.write_shard()
            trainer.save()
            logging.info(progress.line(done, mean_return=float(np.mean(returns)) if returns else float("nan"),
                                       loss=metrics["loss"]))


def collect_real(hparams, env, data_dir, data_epoch, policy, seed):
    """Stores one collection's real steps in data/epoch_{data_epoch}, continuing a killed one."""
    collect_experience(env, data_dir, data_epoch, steps_per_collection(hparams), hparams.shard_steps,
                       seed + 100_003 * data_epoch, policy, hparams.frame_stack_size)


def evaluate_epoch(hparams, trainer, model, heldout_episodes, epoch, seed):
    """Real-env returns over the eval grid and world-model reward accuracy on held-out data.

    Returns (the JSON summary, the TensorBoard scalars)."""
    policy_results, _ = evaluation.evaluate_policy(hparams, trainer.act, seed + epoch)
    accuracy = evaluation.reward_accuracy(model, heldout_episodes, hparams.reward_accuracy_lengths,
                                          hparams.reward_accuracy_rollouts, hparams.simulated_temperature,
                                          seed + epoch)
    real_steps = steps_per_collection(hparams) * (epoch + 2)
    scalars = dict(evaluation.policy_scalars(policy_results), **accuracy)
    scalars["loop/real_env_steps"] = real_steps
    scalars["loop/simulated_env_steps"] = int(trainer.simulated_steps)
    summary = dict(epoch=epoch, real_env_steps=real_steps, simulated_env_steps=int(trainer.simulated_steps),
                   policy=policy_results, world_model=accuracy)
    logging.info("Epoch %d eval: %s", epoch, ", ".join(f"{k} {v:.3g}" for k, v in scalars.items()))
    return summary, scalars


def save_epoch_results(eval_dir, epoch, summary, scalars, stage_seconds):
    """TensorBoard scalars, then eval_metrics/epoch_K.json: its presence marks the epoch done."""
    write_summaries(tf.summary.create_file_writer(eval_dir), epoch,
                    dict(scalars, **{f"loop/seconds_{name}": t for name, t in stage_seconds.items()}))
    summary = dict(summary, stage_seconds=stage_seconds)
    atomic_write_text(os.path.join(eval_dir, f"epoch_{epoch}.json"), json.dumps(summary, indent=2) + "\n")


def train(hparams, output_dir, seed):
    """Runs (or resumes) the whole loop; returns the last epoch's eval summary."""
    keras.utils.set_random_seed(seed)
    data_dir, world_model_dir, policy_dir, eval_dir = (
        os.path.join(output_dir, name) for name in ("data", "world_model", "policy", "eval_metrics"))
    real_env = make_batch_env(hparams, hparams.real_num_envs)
    check_world_model_actions(hparams, real_env.action_space)
    trainer = PolicyTrainer(hparams, real_env, policy_dir, seed)
    # One Estimator for all epochs: its compiled train step is traced once.
    estimator = world_model_estimator(referenced_hparams(hparams, "world_model"), world_model_dir)
    cli.write_operative_config(output_dir)

    loop = Progress(hparams.epochs, 0, unit="epochs")
    stage_seconds = {}

    @contextlib.contextmanager
    def stage(epoch, name, description):
        """Logs the stage with the loop's progress; its wall time goes to stage_seconds[name]."""
        real_steps = sum(stored_steps(data_dir, e) for e in range(epoch + 2))
        logging.info("=== epoch %d/%d: %s | %s", epoch, hparams.epochs, description,
                     loop.line(epoch, real_steps=real_steps))
        start = time.monotonic()
        yield
        stage_seconds[name] = time.monotonic() - start

    with stage(0, "first_collection", f"first real collection ({hparams.initial_collection})"):
        if hparams.initial_collection == "ppo":
            collect_real_with_ppo(hparams, real_env, data_dir, trainer, seed)
        else:
            collect_real(hparams, real_env, data_dir, 0, None, seed)
    for epoch in range(hparams.epochs):
        if os.path.exists(os.path.join(eval_dir, f"epoch_{epoch}.json")):
            loop = Progress(hparams.epochs, epoch + 1, unit="epochs")  # ETA from this process's epochs
            continue
        seen = list(range(epoch + 1))
        target = world_model_target(hparams, epoch)
        with stage(epoch, "world_model", f"world model to step {target:,}"):
            train_world_model(estimator, data_dir, seed + epoch, target, seen)
        with stage(epoch, "policy", "PPO inside the world model"):
            episodes = storage.read_rollouts(data_dir, seen).episodes
            trainer.train_in_world_model(estimator.model, episodes, epoch)
        with stage(epoch, "collection", "real collection with the policy"):
            collect_real(hparams, real_env, data_dir, epoch + 1, trainer.sample, seed)
        with stage(epoch, "evaluation", "evaluation"):
            heldout = storage.read_rollouts(data_dir, [epoch + 1]).episodes
            results, scalars = evaluate_epoch(hparams, trainer, estimator.model, heldout, epoch, seed)
        # Wall time of this process's stages, for benchmarks; a resumed epoch counts its part only.
        save_epoch_results(eval_dir, epoch, results, scalars, stage_seconds)
        stage_seconds = {}
    real_env.close()
    last = os.path.join(eval_dir, f"epoch_{hparams.epochs - 1}.json")
    logging.info("Done: %d epochs; policies in %s, metrics in %s", hparams.epochs, policy_dir, eval_dir)
    with open(last) as f:
        return json.load(f)


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_hparams_flags("rlmb_base_stochastic_discrete", prefix="loop_")
    cli.define_gin_flags()
    flags.DEFINE_string("output_dir", None, "Run directory: data, world_model, policy, eval_metrics.")
    flags.DEFINE_integer("seed", 0, "Seed of the envs, the networks and the sampling.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    hparams = cli.load_hparams(FLAGS.loop_hparams_set, FLAGS.loop_hparams, flag="loop_hparams_set")
    # Names are checked before anything is written, so a typo leaves no run dir behind.
    check_game(hparams.game)
    if hparams.initial_collection not in ("random", "ppo"):
        raise UserError(f"initial_collection={hparams.initial_collection!r}: use random or ppo")
    get_model(referenced_hparams(hparams, "ppo").policy_network)
    get_model(referenced_hparams(hparams, "world_model").model)
    check_world_model_frames(hparams)
    with gcs.local_output(FLAGS.output_dir) as output_dir:  # gs:// outputs are uploaded as written
        cli.prepare_output_dir(output_dir, hparams)
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    cli.run(main)
