"""The SimPLe loop: real experience -> world model -> a learner inside the world model, repeated;
`python -m rlkit.rl.trainer_model_based` runs it.

First a real collection (the learner learning on the real env as SimPLe, or random actions)
fills data/epoch_000. Then every epoch K of `epochs`:

1. world model: trained on all real data so far, to a cumulative step target;
2. policy: the learner `base_algo` names (PPO) inside the world model,
   `simulated_ppo_iterations` rollouts (more in some epochs) of `ppo.rollout_length` steps on
   `simulated_num_envs` envs started from real frames of the newest data; exported to
   policy/epoch_K;
3. collection: new real data into data/epoch_{K+1}, the learner training on the real env as it
   collects (as SimPLe; `collection=policy`: the policy only samples);
4. evaluation: the policy on the real env (eval_metrics/epoch_K.json) and the world model on
   the data it has not been trained on yet (data/epoch_{K+1}): reward accuracy, losses and
   accuracies with its prior's bits and its own predictions.

OUTPUT_DIR holds data/, world_model/ (checkpoints; TensorBoard train/, eval/, dream/),
policy/ (epoch_K SavedModels, checkpoints/, TensorBoard simulated/ and real/) and
eval_metrics/ (JSON per epoch, TensorBoard at real env steps). Each stage picks up from what is
on disk, so rerunning the same command after a kill continues at the stage where the run
stopped: whole data shards are kept, the world model and the policy resume from their
checkpoints, finished evaluations are kept.
"""

import contextlib
import json
import math
import os
import time

from absl import logging

from rlkit import cli
from rlkit.data_generators import storage
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.experience import collect_experience
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import (
    check_image_game,
    frame_shape,
    make_batch_env,
    pixel_values,
)
from rlkit.data_generators.replay import ReplayMemory
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.hparams.checks import check_frame_decoding
from rlkit.models.registry import get_model
from rlkit.progress import Progress
from rlkit.rl.learners.learner import build_learner, check_learner, learns_from_replay
from rlkit.rl.loops import finished_summary
from rlkit.rl.loops.workers import check_workers, start_workers

# TensorFlow and the modules that import it (about 5 s) are imported by the functions that use
# them, so the command reports a mistake in its flags, set or game in well under a second.


def steps_per_collection(hparams):
    """Real agent steps per collection: the budget split over the epochs, in whole env steps."""
    per_epoch = math.ceil(hparams.num_real_env_steps / hparams.epochs)
    return math.ceil(per_epoch / hparams.real_num_envs) * hparams.real_num_envs


def ppo_iterations_factor(hparams, epoch):
    """SimPLe trains the policy longer in some epochs: x3 in the last, x2 in epoch 1 and in the
    epochs 3 and 7 before the last (1, 7 and 11 of 15)."""
    last = hparams.epochs - 1
    if epoch == last:
        return 3
    return 2 if epoch in (1, last - 3, last - 7) else 1


def simulated_iterations_target(hparams, epoch, per_epoch=None):
    """The learner's cumulative iterations inside the world model at the end of `epoch` (or of
    `per_epoch` units, such as an off-policy learner's simulated steps)."""
    per_epoch = hparams.simulated_ppo_iterations if per_epoch is None else per_epoch
    return per_epoch * sum(ppo_iterations_factor(hparams, e) for e in range(epoch + 1))


def learner_collections_before(hparams, data_epoch):
    """How many collections before data/epoch_{data_epoch} had the learner train on the real env."""
    if data_epoch == 0:
        return 0
    first = 0 if hparams.initial_collection == "random" else 1
    return first + (data_epoch - 1 if hparams.collection == "learner" else 0)


def world_model_target(hparams, epoch):
    """The world model's cumulative global step at the end of `epoch`."""
    factors = [hparams.longer_training_factor if e in hparams.longer_training_epochs else 1
               for e in range(epoch + 1)]
    return hparams.world_model.train_steps * sum(factors)


class PolicyTrainer:
    """The loop's learner (`base_algo`), its counters and checkpoints (policy/checkpoints), and
    its TensorBoard events: policy/simulated (x: simulated steps) and policy/real (x: real steps,
    when it also learns during the first collection)."""

    def __init__(self, hparams, env, policy_dir, seed):
        import tensorflow as tf

        from rlkit import checkpoints

        self.hparams = hparams
        self.policy_dir = policy_dir
        self.seed = seed
        self.learner = build_learner(hparams, env.observation_space, env.action_space, seed)
        self.action_space = env.action_space
        self.action_meanings = env.action_meanings
        self.iteration = tf.Variable(0, dtype=tf.int64)  # iterations inside the world model
        self.simulated_steps = tf.Variable(0, dtype=tf.int64)
        self.real_iterations = tf.Variable(0, dtype=tf.int64)  # iterations on the real env
        self.real_steps = tf.Variable(0, dtype=tf.int64)
        self.checkpoint = checkpoints.RunCheckpoint(
            os.path.join(policy_dir, "checkpoints"), hparams.keep_checkpoints, f"the {hparams.base_algo} learner",
            iteration=self.iteration, simulated_steps=self.simulated_steps, real_iterations=self.real_iterations,
            real_steps=self.real_steps, **self.learner.checkpointables())
        if self.checkpoint.restore():
            logging.info("Policy resumed at iteration %d (%d simulated steps)", int(self.iteration),
                         int(self.simulated_steps))

    def writer(self, name):
        import tensorflow as tf
        return tf.summary.create_file_writer(os.path.join(self.policy_dir, name))

    def save(self):
        # Numbered by iterations for PPO, by simulated steps for off-policy learners.
        number = int(self.simulated_steps) if self.learner.off_policy else int(self.iteration)
        self.checkpoint.save(number + int(self.real_iterations))

    def export_path(self, epoch):
        return os.path.join(self.policy_dir, f"epoch_{epoch}")

    def train_in_world_model(self, model, store, data_epochs, epoch):
        """The learner inside `model`, started from real frames of the store's `data_epochs`, up
        to this epoch's target; then the export policy/epoch_K."""
        from rlkit.rl.loops.off_policy import train_off_policy
        from rlkit.rl.loops.on_policy import train_on_policy
        from rlkit.rl.loops.simulated_env import SimulatedBatchEnv

        hparams = self.hparams
        env = None
        if self.learner.off_policy:  # DQN: a number of simulated steps, from a replay of its own
            target = simulated_iterations_target(hparams, epoch, hparams.simulated_steps_per_epoch)
            if int(self.simulated_steps) < target:
                env = SimulatedBatchEnv(model, store, hparams.simulated_num_envs, self.action_space,
                                        self.action_meanings, hparams.simulated_temperature, data_epochs,
                                        hparams.simulated_reward)
                learner = self.learner.hparams
                replay = ReplayMemory(os.path.join(self.policy_dir, "simulated_replay"), env.num_envs,
                                      hparams.frame_stack_size, learner.replay_capacity,
                                      hparams.simulated_rollout_length * 10, learner.n_step, True, learner.prioritized,
                                      learner.priority_exponent)
                total = simulated_iterations_target(hparams, hparams.epochs - 1, hparams.simulated_steps_per_epoch)
                train_off_policy(self.learner, FrameStack(env, hparams.frame_stack_size), replay, self.simulated_steps,
                                 target, total, self.seed, self.writer("simulated"), save_checkpoint=self.save,
                                 log_every_steps=max(1, hparams.simulated_steps_per_epoch // 20),
                                 restart_every=hparams.simulated_rollout_length)
        else:
            target = simulated_iterations_target(hparams, epoch)
            if int(self.iteration) < target:
                env = SimulatedBatchEnv(model, store, hparams.simulated_num_envs, self.action_space,
                                        self.action_meanings, hparams.simulated_temperature, data_epochs,
                                        hparams.simulated_reward)
                # Every rollout starts from new real frames: SimPLe's fixed-length simulated rollouts.
                train_on_policy(self.learner, FrameStack(env, hparams.frame_stack_size), self.iteration,
                                self.simulated_steps, target, simulated_iterations_target(hparams, hparams.epochs - 1),
                                self.seed, self.writer("simulated"), restart_every_rollout=True,
                                save_checkpoint=self.save, checkpoint_every=hparams.checkpoint_every_iterations,
                                log_every=max(1, hparams.simulated_ppo_iterations // 20))
        if not os.path.exists(self.export_path(epoch)):
            self.learner.export(self.export_path(epoch))


def collect_real_with_learner(hparams, env, data_dir, data_epoch, trainer, seed, workers=None):
    """A collection into data/epoch_{data_epoch} with the learner learning on the real env as it
    collects (rollouts of real_rollout_length steps). The learner is checkpointed with every
    shard, so both resume together. workers: Ray actors step the real envs instead of `env`."""
    from rlkit.rl.loops.on_policy import train_on_policy

    target = steps_per_collection(hparams)
    done = storage.stored_steps(data_dir, data_epoch)
    if done >= target:
        return
    steps_per_iteration = hparams.real_num_envs * hparams.real_rollout_length
    per_collection = math.ceil(target / steps_per_iteration)
    first_iteration = learner_collections_before(hparams, data_epoch) * per_collection
    # The stored shards say how far the collection got: a kill may land between a shard and its checkpoint.
    trainer.real_iterations.assign(first_iteration + done // steps_per_iteration)
    trainer.real_steps.assign(first_iteration * steps_per_iteration + done)
    last_iteration = first_iteration + per_collection
    total = learner_collections_before(hparams, hparams.epochs + 1) * per_collection  # all collections
    writer = storage.RolloutWriter(data_dir, data_epoch, hparams.real_num_envs)

    def store(observation, actions, step):
        writer.add(observation[:, -1], actions, step)

    def write_shard(iteration, metrics):
        if writer.num_buffered_steps >= hparams.shard_steps or iteration == last_iteration:
            writer.write_shard()
            trainer.save()

    train_on_policy(trainer.learner, FrameStack(env, hparams.frame_stack_size), trainer.real_iterations,
                    trainer.real_steps, last_iteration, total, seed + 100_003 * data_epoch, trainer.writer("real"),
                    on_step=store, after_iteration=write_shard, rollout_length=hparams.real_rollout_length,
                    workers=workers)


def collect_real(hparams, env, data_dir, data_epoch, act, seed, workers=None):
    """Stores one collection's real steps in data/epoch_{data_epoch}, continuing a killed one;
    `act` None collects at random. workers: Ray actors step the real envs instead of `env`."""
    steps_from = (lambda start_seed: workers.steps(start_seed, with_policy=act is not None)) if workers else None
    collect_experience(env, data_dir, data_epoch, steps_per_collection(hparams), hparams.shard_steps,
                       seed + 100_003 * data_epoch, act, hparams.frame_stack_size, steps_from=steps_from)


def evaluate_epoch(hparams, trainer, estimator, store, epoch, seed, workers=None):
    """Real-env returns over the eval grid, and the world model on the data it has not been
    trained on yet (data/epoch_{epoch+1}): its reward accuracy and its losses and accuracies.

    Returns (the JSON summary, the TensorBoard scalars)."""
    from rlkit.rl.loops import evaluation
    from rlkit.rl.loops.world_model_training import evaluate_world_model

    policy_results, _ = evaluation.evaluate_policy(hparams, trainer.learner.act, seed + epoch, workers=workers,
                                                   final=epoch == hparams.epochs - 1)
    held_out = [epoch + 1]
    accuracy = evaluation.reward_accuracy(estimator.model, store, hparams.reward_accuracy_lengths,
                                          hparams.reward_accuracy_rollouts, hparams.simulated_temperature,
                                          seed + epoch, epochs=held_out)
    model_metrics = evaluate_world_model(estimator, store, seed + epoch, held_out,
                                         f"held-out data/epoch_{epoch + 1:03d}")
    real_steps = steps_per_collection(hparams) * (epoch + 2)
    scalars = dict(evaluation.policy_scalars(policy_results), **accuracy)
    scalars.update({f"world_model/{name}": value for name, value in model_metrics.items() if name != "global_step"})
    scalars["loop/epoch"] = epoch
    scalars["loop/simulated_env_steps"] = int(trainer.simulated_steps)
    summary = dict(epoch=epoch, real_env_steps=real_steps, simulated_env_steps=int(trainer.simulated_steps),
                   policy=policy_results, world_model=dict(accuracy, held_out_data_epoch=epoch + 1, **model_metrics))
    logging.info("Epoch %d eval: %s", epoch, ", ".join(f"{k} {v:.3g}" for k, v in scalars.items()))
    return summary, scalars


def save_epoch_results(eval_dir, summary, scalars, stage_seconds):
    """TensorBoard scalars at the real env steps so far, then eval_metrics/epoch_K.json: its
    presence marks the epoch done."""
    import tensorflow as tf

    from rlkit.summaries import write_summaries

    write_summaries(tf.summary.create_file_writer(eval_dir), summary["real_env_steps"],
                    dict(scalars, **{f"loop/seconds_{name}": t for name, t in stage_seconds.items()}))
    summary = dict(summary, stage_seconds=stage_seconds)
    path = os.path.join(eval_dir, f"epoch_{summary['epoch']}.json")
    atomic_write_text(path, json.dumps(summary, indent=2) + "\n")


def stored_epochs(eval_dir, epochs):
    """(epochs done, their stored wall time in seconds) of a run being resumed: the loop's ETA
    starts from them. Epochs finish in order, so the done ones are the first."""
    done, seconds = 0, 0.0
    while done < epochs and os.path.exists(path := os.path.join(eval_dir, f"epoch_{done}.json")):
        with open(path) as f:
            seconds += sum(json.load(f).get("stage_seconds", {}).values())
        done += 1
    return done, seconds


def final_evaluation(hparams, output_dir):
    """The last epoch's evaluation summary: there once the run is done."""
    return os.path.join(output_dir, "eval_metrics", f"epoch_{hparams.epochs - 1}.json")


def train(hparams, output_dir, seed, on_evaluation=None):
    """Runs (or resumes) the whole loop; returns the last epoch's eval summary.

    on_evaluation(real env steps, main return) hears of every epoch's evaluation (a search
    reports it to Ray Tune). With real_num_workers > 0, Ray actors run the real envs: every
    real collection and evaluation (rlkit.rl.loops.workers)."""
    last = final_evaluation(hparams, output_dir)
    if (finished := finished_summary(last)) is not None:
        return finished
    import keras

    from rlkit.rl.loops import evaluation
    from rlkit.rl.loops.world_model_training import (
        train_world_model,
        world_model_estimator,
    )

    keras.utils.set_random_seed(seed)
    data_dir, world_model_dir, policy_dir, eval_dir = (
        os.path.join(output_dir, name) for name in ("data", "world_model", "policy", "eval_metrics"))
    real_env = make_batch_env(hparams, hparams.real_num_envs)
    trainer = PolicyTrainer(hparams, real_env, policy_dir, seed)
    workers = start_workers(hparams, trainer.learner, hparams.real_num_envs, seed)
    # One Estimator for all epochs: its compiled train step is traced once.
    estimator = world_model_estimator(hparams.world_model, world_model_dir, frame_shape(hparams),
                                      int(real_env.action_space.n), pixel_values(hparams))
    cli.write_operative_config(output_dir)

    done_epochs, done_seconds = stored_epochs(eval_dir, hparams.epochs)
    loop = Progress(hparams.epochs, done_epochs, unit="epochs", done_seconds=done_seconds)
    stage_seconds = {}

    @contextlib.contextmanager
    def stage(epoch, name, description):
        """Logs the stage with the loop's progress; its wall time goes to stage_seconds[name]."""
        real_steps = sum(storage.stored_steps(data_dir, e) for e in range(epoch + 2))
        logging.info("=== epoch %d/%d: %s | %s", epoch, hparams.epochs, description,
                     loop.line(epoch, real_steps=real_steps))
        start = time.monotonic()
        yield
        stage_seconds[name] = time.monotonic() - start

    if storage.stored_steps(data_dir, 0) < steps_per_collection(hparams):  # else a resumed run has it
        with stage(0, "first_collection", f"first real collection ({hparams.initial_collection})"):
            if hparams.initial_collection == "random":
                collect_real(hparams, real_env, data_dir, 0, None, seed, workers)
            else:
                collect_real_with_learner(hparams, real_env, data_dir, 0, trainer, seed, workers)
    # All real data, held compactly; each stage reads only the shards written since the last.
    store = FrameStore(data_dir)
    for epoch in range(hparams.epochs):
        if os.path.exists(os.path.join(eval_dir, f"epoch_{epoch}.json")):
            continue
        seen = list(range(epoch + 1))
        target = world_model_target(hparams, epoch)
        with stage(epoch, "world_model", f"world model to step {target:,}"):
            store.update()
            train_world_model(estimator, store, seed + epoch, target, seen)
        with stage(epoch, "policy", f"{hparams.base_algo} inside the world model"):
            # Simulated rollouts start from the newest real data: the states the current policy
            # reaches, as in SimPLe.
            trainer.train_in_world_model(estimator.model, store, [epoch], epoch)
        with stage(epoch, "collection", f"real collection ({hparams.collection})"):
            if hparams.collection == "learner":
                collect_real_with_learner(hparams, real_env, data_dir, epoch + 1, trainer, seed, workers)
            else:
                collect_real(hparams, real_env, data_dir, epoch + 1, trainer.learner.act, seed, workers)
        with stage(epoch, "evaluation", "evaluation"):
            store.update()
            results, scalars = evaluate_epoch(hparams, trainer, estimator, store, epoch, seed, workers)
        # Wall time of this process's stages, for benchmarks; a resumed epoch counts its part only.
        save_epoch_results(eval_dir, results, scalars, stage_seconds)
        stage_seconds = {}
        evaluation.report(on_evaluation, results["real_env_steps"], results["policy"])
    real_env.close()
    if workers is not None:
        workers.close()
    logging.info("Done: %d epochs; policies in %s, metrics in %s", hparams.epochs, policy_dir, eval_dir)
    with open(last) as f:
        return json.load(f)


def check_names(hparams):
    """What can be checked before anything is written, so a mistake leaves no run dir behind."""
    if hparams.get("loop") != "simple":
        raise UserError(f"the set is not a SimPLe loop set (its loop is {hparams.get('loop')!r}): use one such as "
                        "rlmb_base_stochastic_discrete (python -m rlkit.hparams --list)")
    check_workers(hparams, hparams.real_num_envs)
    # The game first: a frameless env is wrong for the world model whatever the learner.
    check_image_game(hparams.game, "the SimPLe loop's world models")
    check_frame_decoding(hparams.world_model, pixel_values(hparams))
    # Before check_learner, which imports TensorFlow: this mistake gets its line within a second.
    if hparams.initial_collection not in ("random", hparams.base_algo):
        raise UserError(f"initial_collection={hparams.initial_collection!r}: use random or {hparams.base_algo} "
                        "(the learner learns on the real env as it collects)")
    check_learner(hparams)
    if learns_from_replay(hparams) and (hparams.initial_collection != "random" or hparams.collection == "learner"):
        raise UserError(f"base_algo={hparams.base_algo!r} learns from replay, not on the real env as it collects: "
                        "use initial_collection=random and collection=policy (as rlmb_dqn_base)")
    get_model(hparams.world_model.model)
