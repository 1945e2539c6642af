"""Exports a policy as a SavedModel that acts with plain TensorFlow, no rlkit needed.

    policy = tf.saved_model.load(OUTPUT_DIR + "/policy")
    out = policy.act(observations, temperature=0.0)  # {"action": [B], "value": [B]}

`observations` are frame-stacked as the trainer's env gives them ([B, k, H, W, C] uint8 for
Atari); temperature 0 acts greedily, 1 samples from the policy.
"""

import os
import shutil

import gymnasium as gym
import tensorflow as tf


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
