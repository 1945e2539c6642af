"""Proximal Policy Optimization (Schulman et al. 2017).

The loss is `ppo_loss`, a pure function of tensors; `PPOLearner` holds the network, the
optimizer and the random state, acts on batches of observations and updates on rollouts. It
runs on any BatchEnv, real or simulated: the model-based loop drives the same learner inside
the world model.
"""

import gin
import gymnasium as gym
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

from rlkit.hparams import referenced_hparams
from rlkit.models.optimizers import make_optimizer
from rlkit.models.registry import get_model
from rlkit.rl.returns import gae

tfd = tfp.distributions

def learning_rate_at(hparams, progress):
    """The learning rate `progress` (0..1) of the way through training."""
    if hparams.learning_rate_schedule == "constant":
        return hparams.learning_rate
    if hparams.learning_rate_schedule == "linear":
        return hparams.learning_rate * (1.0 - progress)
    raise ValueError(f"unknown learning_rate_schedule {hparams.learning_rate_schedule!r} "
                     "(use constant or linear)")


def policy_distribution(params, action_space):
    """Categorical over logits for discrete actions, diagonal Gaussian for continuous ones."""
    if isinstance(action_space, gym.spaces.Discrete):
        return tfd.Categorical(logits=params)
    mean, log_std = tf.split(params, 2, axis=-1)
    return tfd.Independent(tfd.Normal(mean, tf.exp(log_std)), reinterpreted_batch_ndims=1)


def ppo_loss(log_probs, entropy, values, old_log_probs, advantages, returns, clip_coef, value_coef,
             entropy_coef):
    """The PPO objective on a minibatch; all inputs are [B]. Returns (loss, metrics).

    loss = clipped surrogate + value_coef * value MSE - entropy_coef * entropy.
    """
    log_ratio = log_probs - old_log_probs
    ratio = tf.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * tf.clip_by_value(ratio, 1.0 - clip_coef, 1.0 + clip_coef)
    policy_loss = tf.reduce_mean(tf.maximum(unclipped, clipped))
    value_loss = 0.5 * tf.reduce_mean(tf.square(values - returns))
    entropy = tf.reduce_mean(entropy)
    loss = policy_loss + value_coef * value_loss - entropy_coef * entropy
    metrics = {
        "loss": loss,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        # The low-variance KL estimator (Schulman's "approximating KL divergence" note).
        "approx_kl": tf.reduce_mean((ratio - 1.0) - log_ratio),
        "clip_fraction": tf.reduce_mean(tf.cast(tf.abs(ratio - 1.0) > clip_coef, tf.float32)),
    }
    return loss, metrics


def normalize(advantages):
    return (advantages - tf.reduce_mean(advantages)) / (tf.math.reduce_std(advantages) + 1e-8)


class PPOLearner:
    """A policy network trained with PPO, with its optimizer and random state."""

    def __init__(self, network, action_space, hparams, seed):
        self.network = network
        self.action_space = action_space
        self.hparams = hparams
        with gin.config_scope("ppo"):
            self.optimizer = make_optimizer(hparams.learning_rate)
        self.optimizer.build(network.trainable_variables)
        self.rng = tf.random.Generator.from_seed(seed)
        self._discrete = isinstance(action_space, gym.spaces.Discrete)

    def checkpointables(self):
        """What a checkpoint must hold to continue training."""
        return dict(network=self.network, optimizer=self.optimizer, rng=self.rng)

    def set_learning_rate(self, learning_rate):
        self.optimizer.learning_rate.assign(learning_rate)

    @tf.function
    def _act(self, observation, temperature):
        params, values = self.network(observation, training=False)
        seed = tf.cast(self.rng.make_seeds(1)[:, 0], tf.int32)
        if self._discrete:
            greedy = tf.argmax(params, axis=-1, output_type=tf.int32)
            scaled = tfd.Categorical(logits=params / tf.maximum(temperature, 1e-6))
            actions = tf.where(temperature > 0, scaled.sample(seed=seed), greedy)
        else:
            mean, log_std = tf.split(params, 2, axis=-1)
            noise = tf.random.stateless_normal(tf.shape(mean), seed=seed)
            actions = mean + temperature * tf.exp(log_std) * noise
        log_probs = policy_distribution(params, self.action_space).log_prob(actions)
        return actions, log_probs, values

    def act(self, observation, temperature=1.0):
        """Actions sampled at `temperature` (0: greedy), their log-probabilities and the values."""
        actions, log_probs, values = self._act(tf.convert_to_tensor(observation),
                                               tf.constant(temperature, tf.float32))
        return actions.numpy(), log_probs.numpy(), values.numpy()

    @tf.function
    def _train_step(self, observations, actions, old_log_probs, advantages, returns):
        hparams = self.hparams
        with tf.GradientTape() as tape:
            params, values = self.network(observations, training=True)
            distribution = policy_distribution(params, self.action_space)
            loss, metrics = ppo_loss(
                distribution.log_prob(actions), distribution.entropy(), values, old_log_probs,
                normalize(advantages), returns, hparams.clip_coef, hparams.value_coef,
                hparams.entropy_coef)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)
        gradients, metrics["gradient_norm"] = tf.clip_by_global_norm(gradients, hparams.max_gradient_norm)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return metrics

    def update(self, rollout):
        """Several epochs of minibatch updates on a Rollout; returns the mean of each metric."""
        hparams = self.hparams
        advantages, returns = gae(rollout.rewards, rollout.values, rollout.dones, rollout.last_values,
                                  hparams.gamma, hparams.gae_lambda)
        num_samples = rollout.actions.size
        flat = lambda x: tf.convert_to_tensor(x.reshape((num_samples,) + x.shape[2:]))  # noqa: E731
        data = [flat(x) for x in (rollout.observations, rollout.actions, rollout.log_probs,
                                  advantages, returns)]
        minibatch_size = num_samples // hparams.num_minibatches
        history = []
        for _ in range(hparams.optimization_epochs):
            order = tf.argsort(self.rng.uniform([num_samples]))
            for start in range(0, minibatch_size * hparams.num_minibatches, minibatch_size):
                indices = order[start:start + minibatch_size]
                history.append(self._train_step(*(tf.gather(x, indices) for x in data)))
        metrics = {name: float(np.mean([m[name] for m in history])) for name in history[0]}
        variance = np.var(returns)
        metrics["explained_variance"] = float(1 - np.var(returns - rollout.values) / variance) if variance else 0.0
        return metrics


def build_learner(hparams, observation_space, action_space, seed):
    """The PPO learner of an experiment: the PPO set `hparams` names, acting on stacks of
    `hparams.frame_stack_size` observations of one env's `observation_space`."""
    ppo = referenced_hparams(hparams, "ppo")
    observation_shape = (hparams.frame_stack_size,) + tuple(observation_space.shape)
    network = get_model(ppo.policy_network)(observation_shape, observation_space.dtype, action_space, ppo)
    return PPOLearner(network, action_space, ppo, seed)
