"""Does a SimPLe or DreamerV2 run's world model predict the real rewards, and does its policy ever see one?

    python -m rlkit.rl.analysis.check_rewards --run=RUN [--data_epochs=0,1,2] [--random_steps=2048] [--rows_of_channel=C]
    python -m rlkit.rl.analysis.check_rewards --run=RUN --wm_dir=WM   # another model of RUN's data (trainer_world_model)

For a `trainer_model_based` run directory (its newest world model, its data and its policy's
TensorBoard logs), prints:
- how many stored real steps have a non-zero reward;
- the world model's reward on exactly those steps, predicted from the 4 real frames and actions
  before each (as the world model's env starts), with its bits sampled at temperature 0 and at
  1 (the loop's simulated_temperature), and on as many random other steps (false rewards);
- how sure its reward head is: its probability of a reward on the rewarded steps and on the
  others, and how often a rewarded step scores above another (ROC AUC; 0.5 is chance): a head
  that senses the rewards but is never sure enough to predict them, or one that senses nothing
  (DreamerV2's head is a unit-variance Gaussian: its weights of -1, 0 and 1 are its densities
  there, so its P(a reward) is about 0.55 where its mean is 0, and its ranking is what tells);
- inside the world model: the share of the policy's training rollouts with any reward, per
  epoch's worth of iterations, and the policy's entropy at the start and the end;
- with --rows_of_channel=C, where the stored frames' channel C (a MinAtar game's player: 0 in
  Freeway, the chicken) is: how many frames have it in each row, top row first. The world
  model's env starts from stored frames, so this is where the policy's rollouts start.

A held-out reward accuracy near 1 says little when rewards are rare: predicting none is then
almost always right. This is the check for games whose rewards are rare (docs/results_journal.md, Freeway).
"""

import os

import numpy as np
from absl import flags

from rlkit import cli
from rlkit.errors import UserError, run_command
from rlkit.rl.experiments.curves import read_scalar

# TensorFlow and the modules that import it (about 3 s) are imported where they are used, so
# --help and a mistake in the flags are answered at once.

BATCH = 32  # windows per model call: a batch of Atari frames' pixel logits takes hundreds of MB


def real_steps(model, store, steps, context, temperature):
    """For each batch of the stored `steps` [(episode, position)]: their windows of the `context`
    real frames ending at each step (padded at an episode's start), the frames [B, k, H, W, C],
    each step's action [B] and the model's state after the frames before it, as the world model's
    env starts from stored frames."""
    import tensorflow as tf

    for first in range(0, len(steps), BATCH):
        windows = [store.window(episode, position - context + 1, context) for episode, position in steps[first:][:BATCH]]
        frames = tf.constant(np.stack([w["frames"] for w in windows]))
        actions = np.stack([w["actions"] for w in windows])
        yield windows, frames, tf.constant(actions[:, -1]), model.start_state(frames, tf.constant(actions[:, :-1]),
                                                                               temperature)


def predicted_rewards(model, store, steps, context, temperature):
    """The model's rewards [N] for the stored `steps` [(episode, position)], each predicted from
    the `context` real frames ending at it (the last one's action is the step's), the real
    rewards [N], and the reward head's probability of any reward (of -1 or 1) [N]."""
    predicted, real, any_reward = [], [], []
    for windows, frames, actions, state in real_steps(model, store, steps, context, temperature):
        # One pass: the likeliest reward of the head's distribution, which is the one next_frame
        # predicts for a Gaussian head; a two-hot head's differs only where its mass is split apart.
        probabilities = model.reward_probabilities(frames, actions, state, temperature).numpy()
        predicted.append(probabilities.argmax(axis=1) - 1)
        real.append(np.array([w["rewards"][-1] for w in windows]))
        any_reward.append(1.0 - probabilities[:, 1])
    return np.concatenate(predicted), np.concatenate(real), np.concatenate(any_reward)


def ranked_above(positives, negatives):
    """The share of (positive, negative) pairs the positive scores above (ties half): ROC AUC."""
    scores = np.concatenate([positives, negatives])
    order = scores.argsort(kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # ties share their mean rank
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    return (ranks[:len(positives)].sum() - len(positives) * (len(positives) + 1) / 2) / (len(positives) * len(negatives))


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("run", None, "a trainer_model_based output dir")
    flags.DEFINE_string("wm_dir", None, "a world model of the run's game to check instead of its own")
    flags.DEFINE_list("data_epochs", None, "comma-separated data epochs (default all)")
    flags.DEFINE_integer("random_steps", 2048, "other steps checked for false rewards")
    flags.DEFINE_integer("rows_of_channel", None, "a channel whose row to count")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if not FLAGS.run:
        raise UserError("--run is required: " + FLAGS["run"].help)
    epochs = cli.data_epochs(FLAGS.data_epochs)
    from rlkit.rl.loops.world_model_training import load_loop_run

    hparams, action_space, _, model, store = load_loop_run(FLAGS.run, epochs, wm_dir=FLAGS.wm_dir)
    num_actions = int(action_space.n)
    context = model.hparams.num_context_frames

    rewarded, others = [], []
    rng = np.random.default_rng(0)
    for episode, stored in enumerate(store.episodes):
        if len(stored) < context:
            continue
        rewards = store.step_values("rewards", stored.indices)
        rewarded += [(episode, p) for p in np.flatnonzero(rewards[context - 1:] != 0) + context - 1]
        others += [(episode, p) for p in np.flatnonzero(rewards[context - 1:] == 0) + context - 1]
    print(f"real data: {store.num_steps:,} steps, {len(rewarded)} with a non-zero reward")
    others = [others[i] for i in rng.choice(len(others), min(FLAGS.random_steps, len(others)), replace=False)]
    certainty = {}
    for temperature in (0.0, 1.0):
        line = f"temperature {temperature:g}:"
        if rewarded:
            predicted, real, certainty["rewarded"] = predicted_rewards(model, store, rewarded, context, temperature)
            line += f" the real reward predicted on {int(np.sum(predicted == real))} of {len(rewarded)} rewarded steps;"
        predicted, _, certainty["others"] = predicted_rewards(model, store, others, context, temperature)
        print(f"{line} a reward predicted on {int(np.sum(predicted != 0))} of {len(others)} steps without one")
    if rewarded and others:  # at temperature 1, the last pass: does the head rank rewarded steps first?
        print(f"reward head: P(a reward) {np.mean(certainty['rewarded']):.4f} on average on the rewarded steps, "
              f"{np.mean(certainty['others']):.4f} on the others; a rewarded step scores above another "
              f"{ranked_above(certainty['rewarded'], certainty['others']):.3f} of the time (0.5: no better than chance)")

    simulated = os.path.join(FLAGS.run, "policy", "simulated")
    if os.path.isdir(simulated):
        steps, rollout_rewards = read_scalar(simulated, "charts/rollout_reward")
        per_epoch = hparams.simulated_ppo_iterations
        shares = [f"{np.mean(rollout_rewards[i:i + per_epoch] != 0):.3f}"
                  for i in range(0, len(rollout_rewards), per_epoch)]
        print(f"inside the world model: {int(np.sum(rollout_rewards != 0))} of {len(rollout_rewards)} training "
              f"rollouts had a reward; share per {per_epoch} iterations: {' '.join(shares)}")
        _, entropy = read_scalar(simulated, "losses/entropy")
        print(f"policy entropy inside the world model: {entropy[0]:.2f} at the start, {entropy[-1]:.2f} at the end "
              f"(uniform over {num_actions} actions: {np.log(num_actions):.2f})")

    if FLAGS.rows_of_channel is not None:
        steps = np.concatenate([stored.indices for stored in store.episodes])
        on = np.concatenate([store.frames(steps[i:i + 10_000])[..., FLAGS.rows_of_channel].any(axis=2)
                             for i in range(0, len(steps), 10_000)])  # [N, rows], decoded in parts
        rows = np.bincount(np.argmax(on[on.any(axis=1)], axis=1), minlength=on.shape[1])
        print(f"channel {FLAGS.rows_of_channel}'s top row in the {len(steps):,} stored frames, top row first: "
              f"{' '.join(str(n) for n in rows)} ({np.sum(~on.any(axis=1))} frames without it)")


if __name__ == "__main__":
    define_flags()
    run_command(main)
