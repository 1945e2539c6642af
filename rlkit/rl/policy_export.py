"""Exports a policy as a SavedModel that acts with plain TensorFlow, no rlkit needed, and
finds and loads such exports (for the evaluator and the player).

    policy = tf.saved_model.load(OUTPUT_DIR + "/policy")
    out = policy.act(observations, temperature=0.0)  # {"action": [B], "value": [B]}

`observations` are frame-stacked as the trainer's env gives them ([B, k, H, W, C] uint8 for
Atari); temperature 0 acts greedily, 1 samples from the policy.
"""

import os
import re
import shutil

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rlkit.errors import UserError


class ExportedPolicy(tf.Module):
    def __init__(self, network, action_space, observation_shape, observation_dtype):
        super().__init__()
        self.network = network
        self._discrete = isinstance(action_space, gym.spaces.Discrete)
        self.act = tf.function(self._act, input_signature=[
            tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype, name="observation"),
            tf.TensorSpec((), tf.float32, name="temperature")])

    def _act(self, observation, temperature):
        params, value = self.network(observation, training=False)
        if self._discrete:
            greedy = tf.argmax(params, axis=-1, output_type=tf.int32)
            sampled = tf.random.categorical(params / tf.maximum(temperature, 1e-6), 1, dtype=tf.int32)[:, 0]
            action = tf.where(temperature > 0, sampled, greedy)
        else:
            mean, log_std = tf.split(params, 2, axis=-1)
            action = mean + temperature * tf.exp(log_std) * tf.random.normal(tf.shape(mean))
        return {"action": action, "value": value}


def export_policy(network, action_space, observation_shape, observation_dtype, path):
    """Writes the SavedModel to `path`, replacing an older export only once the new one is whole."""
    module = ExportedPolicy(network, action_space, observation_shape, observation_dtype)
    staging = path.rstrip("/") + ".tmp"
    shutil.rmtree(staging, ignore_errors=True)
    tf.saved_model.save(module, staging, signatures={"serving_default": module.act})
    previous = path.rstrip("/") + ".old"
    if os.path.exists(path):
        os.replace(path, previous)
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


def load_policy(path, observation_shape):
    """`act(observations, temperature) -> actions` of a SavedModel exported by rlkit."""
    try:
        policy = tf.saved_model.load(path)
        policy.act(tf.zeros((1,) + observation_shape, tf.uint8), tf.constant(0.0))
    except (OSError, ValueError, TypeError, AttributeError, tf.errors.OpError) as e:
        reason = " ".join(str(e).split())[:160]
        raise UserError(f"cannot use the policy in {path!r} for {observation_shape} observations ({reason}): "
                        "evaluate it with the hparams of the run that trained it") from None

    def act(observation, temperature):
        return policy.act(tf.convert_to_tensor(observation), tf.constant(temperature, tf.float32))["action"].numpy()
    return act


def random_agent(action_space, seed):
    rng = np.random.default_rng(seed)
    return lambda observation, temperature: rng.integers(action_space.n, size=len(observation))
