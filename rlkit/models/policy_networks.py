"""Networks for the learners: observations in, (policy parameters, value) out for actor-critics,
Q-values out for Q-learners (`q_network`, on the same torsos).

Each builder takes the observation shape of a frame-stacked env ([k, H, W, C] frames or
[k, D] vectors), the env's action space and the PPO hparams, and returns a Keras model.
For a discrete action space the policy parameters are logits [B, A]; for a continuous one
they are [B, 2A]: the Gaussian's mean and log standard deviation.
"""

import gymnasium as gym
import keras
import numpy as np
from keras import layers

from rlkit.models.registry import get_model, register_model

# Orthogonal initialisation with these gains (as in OpenAI baselines and CleanRL) makes PPO
# noticeably more reliable: small policy logits at the start, unit-scale values.
_HIDDEN_GAIN, _POLICY_GAIN, _VALUE_GAIN = np.sqrt(2), 0.01, 1.0


def _dense(units, gain, activation=None, name=None):
    return layers.Dense(units, activation=activation, name=name,
                        kernel_initializer=keras.initializers.Orthogonal(gain))


def _conv(filters, kernel, stride, padding="valid"):
    return layers.Conv2D(filters, kernel, strides=stride, padding=padding, activation="relu",
                         kernel_initializer=keras.initializers.Orthogonal(_HIDDEN_GAIN))


class StackedFramesToChannels(layers.Layer):
    """[B, k, H, W, C] uint8 frames -> [B, H, W, k*C] floats in [0, 1], as SimPLe's policy sees them."""

    def call(self, frames):
        frames = keras.ops.cast(frames, "float32") / 255.0
        _, k, height, width, channels = frames.shape
        frames = keras.ops.transpose(frames, (0, 2, 3, 1, 4))
        return keras.ops.reshape(frames, (-1, height, width, k * channels))


class GaussianPolicyHead(layers.Layer):
    """Mean from the features and a learned, state-independent log standard deviation."""

    def __init__(self, action_size, **kwargs):
        super().__init__(**kwargs)
        self.mean = _dense(action_size, _POLICY_GAIN, name="mean")
        self.action_size = action_size

    def build(self, input_shape):
        self.mean.build(input_shape)
        self.log_std = self.add_weight(shape=(self.action_size,), initializer="zeros", name="log_std")

    def call(self, features):
        mean = self.mean(features)
        return keras.ops.concatenate([mean, keras.ops.zeros_like(mean) + self.log_std], axis=-1)


def _actor_critic(inputs, features, action_space, name, value_features=None):
    """The policy head on `features`, the value head on `value_features` (default: the same)."""
    if isinstance(action_space, gym.spaces.Discrete):
        policy = _dense(int(action_space.n), _POLICY_GAIN, name="logits")(features)
    elif isinstance(action_space, gym.spaces.Box) and len(action_space.shape) == 1:
        policy = GaussianPolicyHead(action_space.shape[0], name="gaussian")(features)
    else:
        raise ValueError(f"PPO networks support Discrete and 1-D Box actions, not {action_space}")
    value_features = features if value_features is None else value_features
    value = layers.Reshape(())(_dense(1, _VALUE_GAIN, name="value")(value_features))
    return keras.Model(inputs, [policy, value], name=name)


@register_model
def simple_policy_cnn(observation_shape, observation_dtype, action_space, hparams):
    """SimPLe's policy: two 5x5 stride-2 conv layers of 32, dropout, dense 128."""
    inputs = keras.Input(observation_shape, dtype=observation_dtype)
    x = StackedFramesToChannels()(inputs)
    x = _conv(32, 5, 2, "same")(x)
    x = _conv(32, 5, 2, "same")(x)
    x = layers.Flatten()(x)
    x = layers.Dropout(hparams.dropout)(x)
    x = _dense(128, _HIDDEN_GAIN, "relu")(x)
    return _actor_critic(inputs, x, action_space, "simple_policy_cnn")


@register_model
def nature_cnn(observation_shape, observation_dtype, action_space, hparams):
    """The Nature DQN torso (Mnih et al. 2015) on 84x84x4 frames: conv 32/64/64, dense 512."""
    inputs = keras.Input(observation_shape, dtype=observation_dtype)
    x = StackedFramesToChannels()(inputs)
    x = _conv(32, 8, 4)(x)
    x = _conv(64, 4, 2)(x)
    x = _conv(64, 3, 1)(x)
    x = layers.Flatten()(x)
    x = layers.Dropout(hparams.dropout)(x)
    x = _dense(512, _HIDDEN_GAIN, "relu")(x)
    return _actor_critic(inputs, x, action_space, "nature_cnn")


@register_model
def minatar_cnn(observation_shape, observation_dtype, action_space, hparams):
    """MinAtar's network (Young & Tian 2019) on 10x10 frames: one 3x3 conv of 16, dense 128."""
    inputs = keras.Input(observation_shape, dtype=observation_dtype)
    x = StackedFramesToChannels()(inputs)
    x = _conv(16, 3, 1)(x)
    x = layers.Flatten()(x)
    x = layers.Dropout(hparams.dropout)(x)
    x = _dense(128, _HIDDEN_GAIN, "relu")(x)
    return _actor_critic(inputs, x, action_space, "minatar_cnn")


@register_model
def mlp(observation_shape, observation_dtype, action_space, hparams):
    """Tanh MLP over the flattened stack of vector observations (`mlp_hidden_sizes`)."""
    inputs = keras.Input(observation_shape, dtype=observation_dtype)
    x = layers.Flatten()(inputs)
    for size in hparams.mlp_hidden_sizes:
        x = _dense(size, _HIDDEN_GAIN, "tanh")(x)
    x = layers.Dropout(hparams.dropout)(x)
    return _actor_critic(inputs, x, action_space, "mlp")


@register_model
def two_mlps(observation_shape, observation_dtype, action_space, hparams):
    """Two tanh MLPs over the flattened stack of vector observations, one for the policy and one
    for the value (`mlp_hidden_sizes` each; stable-baselines3's default for A2C and PPO): the
    value's large early errors cannot swamp the policy's features, as they can in a shared torso
    whose gradient is clipped as a whole."""
    inputs = keras.Input(observation_shape, dtype=observation_dtype)
    flat = layers.Flatten()(inputs)
    towers = []
    for _ in range(2):
        x = flat
        for size in hparams.mlp_hidden_sizes:
            x = _dense(size, _HIDDEN_GAIN, "tanh")(x)
        towers.append(layers.Dropout(hparams.dropout)(x))
    return _actor_critic(inputs, towers[0], action_space, "two_mlps", value_features=towers[1])


def torso(network_name, observation_shape, observation_dtype, hparams):
    """(inputs, features) of a registered network's torso, for heads other than actor-critic
    (the Q-learners'): the network built for two actions, cut below its policy head."""
    model = get_model(network_name)(observation_shape, observation_dtype, gym.spaces.Discrete(2), hparams)
    return model.input, model.get_layer("logits").input


class DuelingHead(layers.Layer):
    """Q = V + A - mean(A) (Wang et al. 2016): a state value and action advantages."""

    def __init__(self, num_actions, **kwargs):
        super().__init__(**kwargs)
        self.value = layers.Dense(1)
        self.advantages = layers.Dense(num_actions)

    def call(self, features):
        advantages = self.advantages(features)
        return self.value(features) + advantages - keras.ops.mean(advantages, axis=-1, keepdims=True)


def q_network(network_name, observation_shape, observation_dtype, num_actions, hparams, dueling=False):
    """Q-values [B, A] from a registered network's torso: a linear head, or a dueling one."""
    inputs, features = torso(network_name, observation_shape, observation_dtype, hparams)
    head = DuelingHead(num_actions, name="dueling") if dueling else layers.Dense(num_actions, name="q_values")
    return keras.Model(inputs, head(features), name=f"{network_name}_q")
