"""The Dreamer loop (DreamerV2, Hafner et al. 2021): acting on the real env into a replay, and
gradient steps of the world model and of the actor-critic in imagination between the steps;
`python -m rlkit.rl.trainer_model_based` runs it for a set whose `loop` is "dreamer".

    prefill: `prefill_steps` uniformly random steps
    then, until num_env_steps:  one env step with the actor (its recurrent state per env);
                                gradient steps owed: train_ratio replayed steps per env step,
                                each step a batch of batch_size sequences of
                                num_context_frames + num_target_frames steps
    every eval_every_steps, and at the end: the policy on the real env (the grid of docs/results.md)

OUTPUT_DIR holds data/ (the replay: every real step, as shards; `replay_capacity` steps are
sampled from), world_model/ (checkpoints of the world model, actor, critics and optimizers;
TensorBoard train/ with the losses and dream/ with open-loop predictions: model, truth,
difference), policy/ (the policy as a SavedModel, which carries its recurrent state),
eval_metrics/ (step_N.json per evaluation, TensorBoard at real env steps) and hparams.json.
A checkpoint is saved with every replay shard, so a killed run resumes on rerun with its replay
and counters (the stored steps count the env steps done; an unstored part of a shard is acted
again).

Offline (`offline_data_dir`): the world model and the actor-critic learn from another run's
data/ (or `collect`'s output) alone, `offline_updates` gradient steps without stepping an env,
then the policy is evaluated on the real env.
"""

import json
import os

import numpy as np
from absl import logging

from rlkit.data_generators.make_env import (
    check_game,
    check_stored_data,
    frame_shape,
    is_image_game,
    make_batch_env,
    pixel_values,
)
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.progress import Progress
from rlkit.provenance import native_bfloat16
from rlkit.rl.loops import finished_summary

# TensorFlow and the modules that import it (about 5 s) are imported by the functions that use
# them, so the command reports a mistake in its flags, set or game in well under a second.


def sequence_length(hparams):
    return hparams.world_model.num_context_frames + hparams.world_model.num_target_frames


def env_steps_per_update(hparams):
    """Env steps between gradient steps: train_ratio is replayed steps per env step (DreamerV3's
    definition), a batch replays batch_size x sequence length steps."""
    return hparams.world_model.batch_size * sequence_length(hparams) / hparams.train_ratio


def updates_due(hparams, env_steps):
    """Gradient steps owed after `env_steps` real steps: none during the prefill, one at its end,
    then one per env_steps_per_update."""
    if env_steps < hparams.prefill_steps:
        return 0
    return 1 + int((env_steps - hparams.prefill_steps) / env_steps_per_update(hparams))


def evaluation_points(hparams):
    """The real env steps after which the policy is evaluated."""
    every = hparams.eval_every_steps
    return sorted({*range(every, hparams.num_env_steps, every), hparams.num_env_steps})


def observations_of(hparams, env):
    """(shape, pixel values, bytes per value) of what the world model sees: an image game's
    frames, or a gymnasium env's observation vectors (pixel values 0, float32)."""
    if is_image_game(hparams.game):
        return frame_shape(hparams), pixel_values(hparams), 1
    return tuple(env.observation_space.shape), 0, 4


def replay_memory_estimate(hparams, env):
    """One line on what the replay holds in memory: frames raw, and LZ4-compressed as rlkit's
    frame store keeps them (measured on the stored data once there is some)."""
    shape, _, value_bytes = observations_of(hparams, env)
    steps = min(hparams.replay_capacity, hparams.num_env_steps)
    raw = steps * int(np.prod(shape)) * value_bytes
    return (f"Replay: up to {steps:,} steps of {'x'.join(map(str, shape))} observations, {raw / 2**30:.2f} GiB "
            "raw; the frame store holds them LZ4-compressed, one by one")


class Dreamer:
    """The agent, its counters and checkpoints (world_model/), and its TensorBoard writers."""

    def __init__(self, hparams, output_dir, env, seed):
        import tensorflow as tf

        from rlkit import checkpoints
        from rlkit.rl.learners.dreamer import DreamerAgent

        self.hparams, self.output_dir = hparams, output_dir
        shape, values, _ = observations_of(hparams, env)
        dtype = compute_dtype(hparams)
        logging.info("Computing in %s (compute_dtype=%s)", dtype, hparams.compute_dtype)
        self.agent = DreamerAgent(hparams.actor_critic, hparams.world_model, shape, env.action_space, values, seed,
                                  dtype)
        # The evaluations' policy (the same networks, states of its own: the training envs' carry
        # on meanwhile), made once so that its functions are traced once, not at every evaluation.
        self.eval_policy = self.agent.new_policy(seed)
        self.model_dir = os.path.join(output_dir, "world_model")
        # The reward head's target (the set's reward_transform): the env's clipped rewards, tanh
        # of the game's (DreamerV2's Atari), or the game's as they are (DreamerV3's); all 0 where
        # the game gave nothing.
        self.reward_column = "rewards" if env.clip_rewards and hparams.reward_transform == "env" else "raw_rewards"
        # Variables exist once the networks have run: one update's graph on a zero batch, not applied.
        self._build()
        self.checkpoint = checkpoints.RunCheckpoint(self.model_dir, hparams.world_model.keep_checkpoints,
                                                    "the Dreamer agent", **self.agent.checkpointables())
        restored = self.checkpoint.restore()
        if restored:
            logging.info("Resumed from %s at %d gradient steps", restored, int(self.agent.updates))
        self.train_writer = tf.summary.create_file_writer(os.path.join(self.model_dir, "train"))
        self.dream_writer = tf.summary.create_file_writer(os.path.join(self.model_dir, "dream"))

    def _build(self):
        agent, hparams = self.agent, self.hparams
        model, length = agent.world_model, sequence_length(hparams)
        actions = (np.zeros((1, length), np.int32) if agent.discrete
                   else np.zeros((1, length, model.num_actions), np.float32))
        model.train_loss(dict(frames=np.zeros((1, length) + model.frame_shape, np.float32 if model.vector else np.uint8),
                              actions=actions, rewards=np.zeros((1, length), np.float32),
                              ends=np.zeros((1, length), np.int32)))
        features = agent.world_model.features(agent.world_model.initial_state(1))
        agent.actor(features), agent.critic(features), agent.target_critic(features)
        agent.target_critic.set_weights(agent.critic.get_weights())
        for optimizer, variables in ((agent.model_optimizer, agent.world_model.trainable_variables),
                                     (agent.actor_optimizer, agent.actor.trainable_variables),
                                     (agent.critic_optimizer, agent.critic.trainable_variables)):
            optimizer.build(variables)

    @property
    def updates(self):
        return int(self.agent.updates)

    def save(self):
        self.checkpoint.save(self.updates)

    def export(self):
        from rlkit.rl.learners.policy_export import export_policy
        export_policy(self.agent.policy, os.path.join(self.output_dir, "policy"))

    def train(self, store, rng, count, log_every):
        """`count` gradient steps on sequences sampled from `store`; their metrics averaged
        every `log_every` steps into TensorBoard (x: gradient steps)."""
        from rlkit.summaries import write_summaries

        hparams = self.hparams
        metrics = []
        for _ in range(count):
            batch = store.sequences(rng, hparams.world_model.batch_size, sequence_length(hparams),
                                    reward_column=self.reward_column, rewarded_share=hparams.rewarded_sequence_share)
            if hparams.reward_transform == "tanh":
                batch["rewards"] = np.tanh(batch["rewards"])
            metrics.append({name: float(value) for name, value in self.agent.update(batch).items()})
            if self.updates % log_every == 0:
                means = {name: float(np.mean([m[name] for m in metrics])) for name in metrics[0]}
                write_summaries(self.train_writer, self.updates,
                                {(f"losses/{k}" if k.endswith("loss") else f"charts/{k}"): v for k, v in means.items()})
                metrics = []
        return metrics

    def write_dream(self, store, step):
        """Open-loop prediction: the world model from a real context, then only the real
        actions; model, truth and difference side by side (TensorBoard world_model/dream)."""
        from rlkit.rl.loops.world_model_training import dream_image, dream_window
        from rlkit.summaries import write_summaries

        window = dream_window(store, self.hparams.world_model) if is_image_game(self.hparams.game) else None
        if window is not None:
            image = dream_image(self.agent.world_model, window, self.hparams.world_model)
            write_summaries(self.dream_writer, step, {}, images={"dream_real_difference": image[None]})


def evaluate(hparams, dreamer, store, env_steps, eval_dir, seed):
    """The policy on the real env over the eval grid: eval_metrics/step_N.json (its presence marks
    the evaluation done) and TensorBoard at real env steps; the policy exported to policy/."""
    import tensorflow as tf

    from rlkit.rl.learners.policy_export import recurrent_act
    from rlkit.rl.loops import evaluation
    from rlkit.summaries import write_summaries

    policy = dreamer.eval_policy
    policy.rng.reset_from_seed(seed + env_steps)  # as a policy made now with this seed would sample
    results, _ = evaluation.evaluate_policy(hparams, recurrent_act(policy), seed + env_steps,
                                            final=env_steps >= hparams.num_env_steps)
    scalars = dict(evaluation.policy_scalars(results), **{"loop/gradient_steps": dreamer.updates})
    write_summaries(tf.summary.create_file_writer(eval_dir), env_steps, scalars)
    dreamer.write_dream(store, env_steps)
    dreamer.export()
    summary = dict(real_env_steps=env_steps, gradient_steps=dreamer.updates, policy=results)
    atomic_write_text(os.path.join(eval_dir, f"step_{env_steps}.json"), json.dumps(summary, indent=2) + "\n")
    return summary


def compute_dtype(hparams):
    """The set's compute_dtype, with "auto" resolved for this CPU."""
    if hparams.compute_dtype != "auto":
        return hparams.compute_dtype
    return "bfloat16" if native_bfloat16() else "float32"


def final_evaluation(hparams, output_dir):
    """The last evaluation's summary: there once the run is done."""
    return os.path.join(output_dir, "eval_metrics", f"step_{hparams.num_env_steps}.json")


def train(hparams, output_dir, seed, on_evaluation=None):
    """Runs (or resumes) the loop, offline where the set names `offline_data_dir`; returns the
    last evaluation's summary.

    on_evaluation(real env steps, main return) hears of every evaluation (a search reports it
    to Ray Tune)."""
    eval_dir, final = os.path.join(output_dir, "eval_metrics"), final_evaluation(hparams, output_dir)
    if (finished := finished_summary(final)) is not None:
        return finished
    import keras

    from rlkit import cli
    from rlkit.rl.loops import evaluation
    keras.utils.set_random_seed(seed)
    env = make_batch_env(hparams, hparams.num_envs)
    dreamer = Dreamer(hparams, output_dir, env, seed)
    cli.write_operative_config(output_dir)
    rng = np.random.default_rng(seed + dreamer.updates)  # sequence sampling, seeded anew on resume

    def evaluated(env_steps, store):
        summary = evaluate(hparams, dreamer, store, env_steps, eval_dir, seed)
        evaluation.report(on_evaluation, summary["real_env_steps"], summary["policy"])
        return summary

    train_on_data = train_offline if hparams.offline_data_dir else train_online
    summary = train_on_data(hparams, dreamer, env, rng, output_dir, seed, evaluated)
    if summary is None:  # every evaluation was made before this rerun
        with open(final) as f:
            summary = json.load(f)
    return summary


def train_offline(hparams, dreamer, env, rng, output_dir, seed, evaluated):
    """`offline_updates` gradient steps on the stored data of `offline_data_dir`, no env stepped
    (checkpointed every `offline_checkpoint_updates`), then the final evaluation's summary."""
    from rlkit.data_generators.frame_store import FrameStore

    store = FrameStore(hparams.offline_data_dir)
    if not store.num_steps:
        raise UserError(f"no readable data in offline_data_dir={hparams.offline_data_dir!r}: point it at a run's "
                        "data/ dir or collect's output")
    logging.info("Offline: %d stored steps in %s; %d gradient steps", store.num_steps, hparams.offline_data_dir,
                 hparams.offline_updates)
    progress = Progress(hparams.offline_updates, dreamer.updates, unit="updates")
    while dreamer.updates < hparams.offline_updates:
        count = min(hparams.offline_updates - dreamer.updates, hparams.offline_checkpoint_updates)
        dreamer.train(store, rng, count, hparams.log_every_updates)
        dreamer.save()
        logging.info(progress.line(dreamer.updates))
    env.close()
    return evaluated(hparams.num_env_steps, store)


def train_online(hparams, dreamer, env, rng, output_dir, seed, evaluated):
    """Dreamer's loop: env steps (random until `prefill_steps`) into the replay, gradient steps as
    `train_ratio` owes them, evaluations at `evaluation_points`; returns the last evaluation's
    summary (None if all were made before this rerun)."""
    from rlkit.data_generators.batch_env import FrameStack
    from rlkit.data_generators.experience import random_policy
    from rlkit.data_generators.replay import ReplayMemory

    logging.info(replay_memory_estimate(hparams, env))
    replay = ReplayMemory(os.path.join(output_dir, "data"), env.num_envs, 1, hparams.replay_capacity,
                          hparams.shard_steps)
    store = replay.store
    env_steps = store.num_steps  # the stored steps say how far acting got
    if env_steps:
        logging.info("Replay: %d stored steps, %.1f MB compressed (%.0f bytes per frame)", env_steps,
                     store.compressed_bytes / 1e6, store.compressed_bytes / max(env_steps, 1))
    random_act = random_policy(env.action_space, seed + env_steps)
    env = FrameStack(env, 1)
    observation = env.reset(seed=seed + env_steps)  # a resumed run starts new episodes, seeded anew
    progress = Progress(hparams.num_env_steps, env_steps)
    eval_dir = os.path.join(output_dir, "eval_metrics")
    points = [p for p in evaluation_points(hparams)
              if not os.path.exists(os.path.join(eval_dir, f"step_{p}.json"))]
    returns, summary = [], None
    while env_steps < hparams.num_env_steps:
        acting = env_steps >= hparams.prefill_steps
        actions = dreamer.agent.act(observation, 1.0) if acting else random_act(observation, 1.0)
        next_observation, step = env.step(actions)
        dreamer.agent.policy.end_episodes(step.done)
        wrote_shard = replay.add(observation[:, -1], actions, step)
        observation = next_observation
        previous, env_steps = env_steps, env_steps + env.env.num_envs
        if previous < hparams.prefill_steps <= env_steps:  # the ETA from the pace of learning, not of the prefill
            progress.restart(env_steps)
        returns += step.episode_return[step.done].tolist()
        owed = updates_due(hparams, env_steps) - dreamer.updates
        if owed > 0 and len(replay):
            dreamer.train(store, rng, owed, hparams.log_every_updates)
        if env_steps // hparams.log_every_steps > previous // hparams.log_every_steps:
            recent = dict(mean_return=float(np.mean(returns[-20:]))) if returns else {}
            logging.info(progress.line(env_steps, gradient_steps=dreamer.updates, **recent))
        if env_steps >= hparams.num_env_steps:
            replay.flush()
            wrote_shard = True
        if wrote_shard:
            dreamer.save()
        while points and env_steps >= points[0]:
            if not wrote_shard:  # the evaluation's step count must survive a kill with the replay
                replay.flush()
                dreamer.save()
                wrote_shard = True
            summary = evaluated(points.pop(0), store)
    env.env.close()
    logging.info("Done: %d env steps, %d gradient steps; policy in %s, metrics in %s", env_steps, dreamer.updates,
                 os.path.join(output_dir, "policy"), eval_dir)
    return summary


def check_names(hparams):
    """What can be checked before anything is written, so a mistake leaves no run dir behind."""
    if hparams.get("loop") != "dreamer":
        raise UserError("the set is not a Dreamer loop set: use one such as dreamer_v2_minatar "
                        "(python -m rlkit.hparams --list)")
    check_game(hparams.game)
    if not is_image_game(hparams.game):
        from rlkit.data_generators.make_env import spaces_of

        observation_space, _, _ = spaces_of(hparams)
        if len(observation_space.shape) != 1:
            raise UserError(f"game {hparams.game!r} gives observations of shape {observation_space.shape}: Dreamer's "
                            "world model takes image frames (Atari, MinAtar) or observation vectors")
    if hparams.offline_data_dir and not os.path.isdir(hparams.offline_data_dir):
        raise UserError(f"offline_data_dir={hparams.offline_data_dir!r} does not exist: point it at a run's data/ dir "
                        "or collect's output")
    if hparams.frame_stack_size != 1:
        raise UserError(f"frame_stack_size={hparams.frame_stack_size}: Dreamer's recurrent state replaces frame "
                        "stacks; use frame_stack_size=1")
    if hparams.offline_data_dir:
        check_stored_data(hparams, hparams.offline_data_dir, "--offline_data_dir")
