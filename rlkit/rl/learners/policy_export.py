"""The acting policy learners act with and export, and finding and loading such exports (for the
evaluator and the player).

A learner acts through a `Policy` module and exports that same module as a SavedModel, which
acts with plain TensorFlow, no rlkit needed:

    policy = tf.saved_model.load(OUTPUT_DIR + "/policy")
    out = policy.act(observations, temperature=0.0)  # {"action": [B], "log_prob": [B], "value": [B]}

`observations` are frame-stacked as the trainer's env gives them ([B, k, H, W, C] uint8 for
Atari); temperature 0 acts greedily, 1 samples from the policy.
"""

import math
import os
import re
import shutil

import gymnasium as gym
import tensorflow as tf

from rlkit.errors import UserError


class Categorical:
    """A categorical distribution over the last axis of `logits`."""

    def __init__(self, logits):
        self.logits = logits

    def log_prob(self, actions):
        return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=self.logits)

    def entropy(self):
        log_probs = tf.nn.log_softmax(self.logits)
        return -tf.reduce_sum(tf.exp(log_probs) * log_probs, axis=-1)


class DiagonalGaussian:
    """Independent normals over the last axis, their log-densities and entropies summed over it."""

    def __init__(self, mean, log_std):
        self.mean, self.log_std = mean, log_std

    def log_prob(self, actions):
        z = (actions - self.mean) * tf.exp(-self.log_std)
        return tf.reduce_sum(-0.5 * tf.square(z) - self.log_std - 0.5 * math.log(2 * math.pi), axis=-1)

    def entropy(self):
        return tf.reduce_sum(self.log_std + 0.5 * math.log(2 * math.pi * math.e), axis=-1)


# Written here rather than taken from tensorflow-probability: these few lines are all the learners
# need, and importing tensorflow-probability (with the tf-keras it loads) cost every command and
# every test process 1.3 s of its start.
def policy_distribution(params, discrete):
    """Categorical over logits for discrete actions; for continuous ones a diagonal Gaussian whose
    mean and log standard deviation are the two halves of `params`."""
    if discrete:
        return Categorical(params)
    mean, log_std = tf.split(params, 2, axis=-1)
    return DiagonalGaussian(mean, log_std)


def sample_actions(params, discrete, temperature, seed):
    """The one action sampler: greedy at temperature 0; else sampled with logits divided by the
    temperature (discrete) or the standard deviation times it (continuous). `seed`: [2] int32."""
    if discrete:
        greedy = tf.argmax(params, axis=-1, output_type=tf.int32)
        logits = params / tf.maximum(temperature, 1e-6)
        sampled = tf.random.stateless_categorical(logits, 1, seed, dtype=tf.int32)[:, 0]
        return tf.where(temperature > 0, sampled, greedy)
    mean, log_std = tf.split(params, 2, axis=-1)
    return mean + temperature * tf.exp(log_std) * tf.random.stateless_normal(tf.shape(mean), seed=seed)


def action_count(action_space):
    """The number of discrete actions, or the size of a continuous action."""
    return int(action_space.n) if isinstance(action_space, gym.spaces.Discrete) else int(action_space.shape[0])


class Policy(tf.Module):
    """An actor-critic network acting at a temperature, with its own random state."""

    def __init__(self, network, action_space, observation_shape, observation_dtype, seed):
        super().__init__()
        self.network = network
        self.rng = tf.random.Generator.from_seed(seed)
        self.discrete = isinstance(action_space, gym.spaces.Discrete)
        # Saved with the policy, so whoever loads it can check it against their env.
        self.action_count = tf.Variable(action_count(action_space), trainable=False, name="action_count")
        self.act = tf.function(self._act, input_signature=[
            tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype, name="observation"),
            tf.TensorSpec((), tf.float32, name="temperature")])

    def _act(self, observation, temperature):
        params, value = self.network(observation, training=False)
        seed = tf.cast(self.rng.make_seeds(1)[:, 0], tf.int32)
        action = sample_actions(params, self.discrete, temperature, seed)
        log_prob = policy_distribution(params, self.discrete).log_prob(action)
        return {"action": action, "log_prob": log_prob, "value": value}


def recurrent_act(policy):
    """`act(observations, temperature) -> actions` of a policy that carries a recurrent state per
    env (Dreamer's, or its SavedModel), with `act.reset()` to start every env afresh (the
    evaluation calls it before its episodes)."""
    def act(observation, temperature=1.0):
        return policy.act(tf.convert_to_tensor(observation), tf.constant(temperature, tf.float32))["action"].numpy()
    act.reset = policy.reset
    return act


def export_policy(policy, path):
    """Writes `policy` as a SavedModel to `path`, replacing an older export only once the new one
    is whole. An export's `best/` (the trainers' best policy so far) stays in place."""
    staging = path.rstrip("/") + ".tmp"
    shutil.rmtree(staging, ignore_errors=True)
    tf.saved_model.save(policy, staging, signatures={"serving_default": policy.act})
    previous = path.rstrip("/") + ".old"
    if os.path.exists(path):
        os.replace(path, previous)
        if os.path.isdir(os.path.join(previous, "best")):
            os.replace(os.path.join(previous, "best"), os.path.join(staging, "best"))
    os.replace(staging, path)
    shutil.rmtree(previous, ignore_errors=True)


def find_policies(policy_dir, all_epochs):
    """[(label, SavedModel dir)]: the dir itself, or its newest epoch_K (every one with all_epochs)."""
    if os.path.exists(os.path.join(policy_dir, "saved_model.pb")):
        return [("policy", policy_dir)]
    epochs = sorted((int(m.group(1)), name) for name in (os.listdir(policy_dir) if os.path.isdir(policy_dir) else [])
                    if (m := re.fullmatch(r"epoch_(\d+)", name))
                    and os.path.exists(os.path.join(policy_dir, name, "saved_model.pb")))
    if not epochs:
        raise UserError(f"no policy in {policy_dir!r}: point --policy_dir at the policy/ dir of an rlkit run "
                        "(a SavedModel, or epoch_K SavedModels)")
    chosen = epochs if all_epochs else epochs[-1:]
    return [(name, os.path.join(policy_dir, name)) for _, name in chosen]


def load_policy(path, observation_shape, action_space=None, observation_dtype=tf.uint8):
    """`act(observations, temperature) -> actions` of a SavedModel exported by rlkit, checked
    against the observations (frames, unless `observation_dtype` says otherwise) and (when given)
    the action space of the env it will act in."""
    try:
        policy = tf.saved_model.load(path)
        policy.act(tf.zeros((1,) + observation_shape, observation_dtype), tf.constant(0.0))
    except (OSError, ValueError, TypeError, AttributeError, tf.errors.OpError) as e:
        reason = " ".join(str(e).split())[:160]
        raise UserError(f"cannot use the policy in {path!r} for {observation_shape} observations ({reason}): "
                        "evaluate it with the hparams of the run that trained it") from None
    if action_space is not None and hasattr(policy, "action_count"):
        trained, wanted = int(policy.action_count.numpy()), action_count(action_space)
        if trained != wanted:
            raise UserError(f"the policy in {path!r} was trained for {trained} actions, but this env has {wanted}: "
                            "evaluate it on the game it was trained on")

    if hasattr(policy, "reset"):  # a recurrent policy (Dreamer's)
        return recurrent_act(policy)

    def act(observation, temperature):
        return policy.act(tf.convert_to_tensor(observation), tf.constant(temperature, tf.float32))["action"].numpy()
    return act
