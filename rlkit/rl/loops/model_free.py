"""The model-free loop: a learner (PPO, A2C, REINFORCE, DQN, NAF) trained on a real environment,
evaluated, checkpointed and exported; `python -m rlkit.rl.trainer_model_free` runs it.

OUTPUT_DIR gets hparams.json, operative_config.gin, checkpoints/ (the last few), TensorBoard
events in train/ and eval/, the final policy as a SavedModel in policy/ and the best evaluated
one in policy/best, for off-policy learners (DQN) the replay memory's shards in replay/, and
once the run is done eval/final.json (its last evaluation). Rerunning after the process was
killed resumes from the last checkpoint, with the stored replay.
"""

import json
import os

from absl import logging

from rlkit import cli
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.rl.learners.learner import build_learner, check_learner
from rlkit.rl.loops import finished_summary
from rlkit.rl.loops.workers import check_workers


def final_evaluation(hparams, output_dir):
    """The finished run's summary (its last evaluation, iterations and env steps), written once its
    policy is exported: there once the run is done."""
    del hparams  # the same for every model-free set; the other loops' name their last epoch or step
    return os.path.join(output_dir, "eval", "final.json")


def train(hparams, output_dir, seed, on_evaluation=None):
    """Runs (or resumes) training as `hparams` describe; returns the last evaluation
    ({eval grid cell: summary}) with the iterations and env steps done.

    on_evaluation(env_steps, main return) hears of every evaluation (a search reports it to
    Ray Tune). With real_num_workers > 0, Ray actors run the real envs (rlkit.rl.loops.workers).

    On-policy learners (PPO) train on rollouts (`train_on_policy`), off-policy ones (DQN) on
    replay batches (`train_off_policy`, the replay memory in OUTPUT_DIR/replay). After each
    evaluation the policy with the best return so far is exported to policy/best. A rerun of a
    finished run returns its eval/final.json and loads nothing."""
    if (finished := finished_summary(final_evaluation(hparams, output_dir))) is not None:
        return finished
    # Imported here, not at the top: the command reports a mistake in its flags before
    # TensorFlow loads (about 5 s).
    import keras
    import tensorflow as tf

    from rlkit import checkpoints
    from rlkit.data_generators.batch_env import FrameStack
    from rlkit.data_generators.make_env import make_batch_env
    from rlkit.data_generators.replay import ReplayMemory
    from rlkit.rl.loops import evaluation
    from rlkit.rl.loops.off_policy import train_off_policy
    from rlkit.rl.loops.on_policy import train_on_policy
    from rlkit.rl.loops.workers import start_workers
    from rlkit.summaries import write_summaries

    keras.utils.set_random_seed(seed)
    env = make_batch_env(hparams, hparams.num_envs)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed)
    # Ray actors for the real envs (real_num_workers > 0): the on-policy loop's rollouts and every
    # evaluation; an off-policy learner's steps stay here, between its updates.
    workers = start_workers(hparams, learner, hparams.num_envs, seed)
    iterations = tf.Variable(0, dtype=tf.int64)
    env_steps = tf.Variable(0, dtype=tf.int64)
    best_return = tf.Variable(-float("inf"), dtype=tf.float64)
    evaluated_steps = tf.Variable(-1, dtype=tf.int64)  # the env steps of the last evaluation
    checkpoint = checkpoints.RunCheckpoint(
        os.path.join(output_dir, "checkpoints"), hparams.keep_checkpoints, f"the {hparams.base_algo} learner",
        added_later=["evaluated_steps"], iteration=iterations, env_steps=env_steps, best_return=best_return,
        evaluated_steps=evaluated_steps, **learner.checkpointables())
    restored = checkpoint.restore()
    if restored:
        logging.info("Resumed from %s at iteration %d, %d env steps", restored, int(iterations), int(env_steps))
    cli.write_operative_config(output_dir)
    policy_dir = os.path.join(output_dir, "policy")
    # On-policy runs take whole iterations within the budget: num_env_steps is never exceeded.
    total_iterations = (None if learner.off_policy else
                        max(1, hparams.num_env_steps // (hparams.num_envs * learner.hparams.rollout_length)))
    # The env steps after which the last evaluation comes.
    final_steps = (hparams.num_env_steps if learner.off_policy else
                   total_iterations * hparams.num_envs * learner.hparams.rollout_length)
    if int(evaluated_steps) >= final_steps and os.path.exists(os.path.join(policy_dir, "saved_model.pb")):
        # A rerun of a finished run: nothing to train, and no new (empty) event files beside its curves.
        logging.info("The run is done: %d env steps, evaluated, its policy in %s", int(env_steps), policy_dir)
        env.close()
        if workers is not None:
            workers.close()
        return dict(eval={}, iterations=int(iterations), env_steps=int(env_steps))
    eval_writer = tf.summary.create_file_writer(os.path.join(output_dir, "eval"))
    train_writer = tf.summary.create_file_writer(os.path.join(output_dir, "train"))
    last_eval = {}
    checkpointed_steps = [int(env_steps)]  # the env steps of the newest checkpoint

    def save_checkpoint():
        checkpoint.save(int(env_steps) if learner.off_policy else int(iterations))
        checkpointed_steps[0] = int(env_steps)

    def evaluate():
        final = int(env_steps) >= final_steps
        results, _ = evaluation.evaluate_policy(hparams, learner.act, seed, workers=workers, final=final)
        write_summaries(eval_writer, int(env_steps), evaluation.policy_scalars(results))
        last_eval.update(results)
        evaluated_steps.assign(env_steps)
        if evaluation.main_return(results) > float(best_return):
            best_return.assign(evaluation.main_return(results))
            learner.export(os.path.join(policy_dir, "best"))
            logging.info("Best return so far (%.2f): policy exported to %s", float(best_return),
                         os.path.join(policy_dir, "best"))
        if checkpointed_steps[0] == int(env_steps):  # this point's checkpoint again, now with its evaluation
            save_checkpoint()
        evaluation.report(on_evaluation, int(env_steps), results)

    def evaluation_due(steps, iteration):
        """Whether the run evaluates after reaching `steps` env steps (off-policy) or `iteration` (on-policy)."""
        if learner.off_policy:
            return (steps // hparams.eval_every_steps > (steps - env.num_envs) // hparams.eval_every_steps
                    or steps >= hparams.num_env_steps)
        return iteration % hparams.eval_every_iterations == 0 or iteration == total_iterations

    # Killed after a checkpoint but before its evaluation was written (an evaluation can take
    # minutes, and the checkpoint is saved again once it is): the resumed run makes it up first,
    # so its curve has no gap.
    if restored and int(evaluated_steps) < int(env_steps) and evaluation_due(int(env_steps), int(iterations)):
        evaluate()

    if learner.off_policy:
        total_steps = hparams.num_env_steps
        replay = ReplayMemory(os.path.join(output_dir, "replay"), env.num_envs, hparams.frame_stack_size,
                              learner.hparams.replay_capacity, hparams.shard_steps, learner.hparams.n_step,
                              env.clip_rewards, learner.hparams.prioritized, learner.hparams.priority_exponent)
        logging.info("Replay memory: %d stored transitions", len(replay))

        def after_step(steps):
            if evaluation_due(steps, None):
                evaluate()
        train_off_policy(learner, FrameStack(env, hparams.frame_stack_size), replay, env_steps, total_steps,
                         total_steps, seed, train_writer, save_checkpoint=save_checkpoint, after_step=after_step,
                         log_every_steps=hparams.log_every_steps)
    else:
        def after_iteration(iteration, metrics):
            if evaluation_due(None, iteration):
                evaluate()
        train_on_policy(learner, FrameStack(env, hparams.frame_stack_size), iterations, env_steps, total_iterations,
                        total_iterations, seed, train_writer, save_checkpoint=save_checkpoint,
                        checkpoint_every=hparams.checkpoint_every_iterations, after_iteration=after_iteration,
                        workers=workers)
    # The last evaluation point's checkpoint was saved again with its evaluation (above): a rerun of
    # the finished run evaluates nothing again (and one made before eval/final.json, this way too).
    if checkpointed_steps[0] != int(env_steps):
        save_checkpoint()
    learner.export(policy_dir)
    summary = dict(eval=last_eval, iterations=int(iterations), env_steps=int(env_steps))
    atomic_write_text(final_evaluation(hparams, output_dir), json.dumps(summary, indent=2) + "\n")
    env.close()
    if workers is not None:
        workers.close()
    logging.info("Done: %d env steps; policy exported to %s (best: %s)", int(env_steps), policy_dir,
                 os.path.join(policy_dir, "best"))
    return summary


def check_names(hparams):
    """What can be checked before anything is written: the learner, and Ray where workers are asked for."""
    if hparams.get("loop") != "model_free":
        raise UserError(f"the set is not a model-free training set (its loop is {hparams.get('loop')!r}): use one "
                        "such as rlmf_base (python -m rlkit.hparams --list)")
    check_workers(hparams, hparams.num_envs)
    check_learner(hparams)
