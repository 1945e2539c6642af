"""Proximal Policy Optimization (Schulman et al. 2017).

The loss is `ppo_loss`, a pure function of tensors; `PPOLearner` (registered as base_algo
"ppo") holds the policy, the optimizer and the random state, acts on batches of observations
and updates on rollouts. It runs on any BatchEnv, real or simulated: the model-based loop
drives the same learner inside the world model, through the same on-policy loop.
"""

import functools

import gin
import numpy as np
import tensorflow as tf

from rlkit.models.optimizers import Adam, make_optimizer
from rlkit.models.registry import get_model
from rlkit.rl.learners.actor_critic import ActorCriticLearner
from rlkit.rl.learners.learner import register_learner
from rlkit.rl.learners.policy_export import Policy, policy_distribution
from rlkit.rl.learners.returns import gae

LOSS_KEYS = frozenset({"loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"})


def ppo_loss(log_probs, entropy, values, old_log_probs, advantages, returns, clip_coef, value_coef,
             entropy_coef):
    """The PPO objective on a minibatch; all inputs are [B]. Returns (loss, metrics).

    loss = clipped surrogate + value_coef * value MSE - entropy_coef * entropy. The value loss is
    the plain mean squared error, as SimPLe's PPO (baselines and CleanRL halve it: their
    vf_coef 0.5 is value_coef 0.25 here).
    """
    # One [B] shape for all: a [B, 1] among them would broadcast into a silently wrong loss.
    assert log_probs.shape.rank == 1 and all(
        x.shape == log_probs.shape for x in (entropy, values, old_log_probs, advantages, returns)), \
        [x.shape for x in (log_probs, entropy, values, old_log_probs, advantages, returns)]
    log_ratio = log_probs - old_log_probs
    ratio = tf.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * tf.clip_by_value(ratio, 1.0 - clip_coef, 1.0 + clip_coef)
    policy_loss = tf.reduce_mean(tf.maximum(unclipped, clipped))
    value_loss = tf.reduce_mean(tf.square(values - returns))
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


class PPOLearner(ActorCriticLearner):
    """A policy network trained with PPO, with its optimizer and random state."""

    def __init__(self, hparams, observation_shape, observation_dtype, action_space, seed):
        self.hparams = hparams
        network = get_model(hparams.policy_network)(observation_shape, observation_dtype, action_space, hparams)
        self.policy = Policy(network, action_space, observation_shape, observation_dtype, seed)
        self.network = network
        adam = functools.partial(Adam, beta_1=hparams.adam_beta1, beta_2=hparams.adam_beta2,
                                 epsilon=hparams.adam_epsilon)
        with gin.config_scope("ppo"):
            self.optimizer = make_optimizer(hparams.learning_rate, default=adam)
        self.optimizer.build(network.trainable_variables)
        # Minibatch shuffling: a generator of its own, so acting and training draw independently.
        self.rng = tf.random.Generator.from_seed(seed + 1)

    def checkpointables(self):
        """What a checkpoint must hold to continue training."""
        return dict(network=self.network, optimizer=self.optimizer, policy_rng=self.policy.rng, rng=self.rng)

    @tf.function(autograph=False)
    def _train_step(self, observations, actions, old_log_probs, advantages, returns):
        hparams = self.hparams
        with tf.GradientTape() as tape:
            params, values = self.network(observations, training=True)
            distribution = policy_distribution(params, self.policy.discrete)
            loss, metrics = ppo_loss(
                distribution.log_prob(actions), distribution.entropy(), values, old_log_probs,
                normalize(advantages) if hparams.advantage_normalization == "minibatch" else advantages,
                returns, hparams.clip_coef, hparams.value_coef,
                hparams.entropy_coef)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)
        gradients, metrics["gradient_norm"] = tf.clip_by_global_norm(gradients, hparams.max_gradient_norm)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return metrics

    def minibatches(self, num_steps, num_envs):
        """Index lists into the rollout's [T * N] samples (time-major), one per update.

        minibatch_time_steps 0: each of `optimization_epochs` epochs shuffles the samples into
        `num_minibatches` minibatches. minibatch_time_steps K (SimPLe's PPO, tensor2tensor's
        `define_ppo_epoch`): the epochs' shuffles of the T time steps, joined, cut into
        T * epochs // K minibatches of K time steps, each with every env's sample at those steps."""
        hparams = self.hparams
        if hparams.minibatch_time_steps:
            steps = tf.concat([tf.argsort(self.rng.uniform([num_steps])) for _ in range(hparams.optimization_epochs)], 0)
            count = num_steps * hparams.optimization_epochs // hparams.minibatch_time_steps
            steps = tf.reshape(steps[:count * hparams.minibatch_time_steps], [count, hparams.minibatch_time_steps])
            return [tf.reshape(s[:, None] * num_envs + tf.range(num_envs), [-1]) for s in tf.unstack(steps)]
        num_samples = num_steps * num_envs
        minibatch_size = num_samples // hparams.num_minibatches
        batches = []
        for _ in range(hparams.optimization_epochs):
            order = tf.argsort(self.rng.uniform([num_samples]))
            batches += [order[start:start + minibatch_size]
                        for start in range(0, minibatch_size * hparams.num_minibatches, minibatch_size)]
        return batches

    def update(self, rollout):
        """Minibatch updates on a Rollout (`minibatches`); returns the mean of each metric.

        advantage_normalization "rollout" (SimPLe's PPO) normalises the advantages over the whole
        rollout once; "minibatch" (baselines, CleanRL) within each minibatch."""
        hparams = self.hparams
        advantages, returns = gae(rollout.rewards, rollout.values, rollout.dones, rollout.last_values,
                                  hparams.gamma, hparams.gae_lambda)
        if hparams.advantage_normalization == "rollout":
            advantages = normalize(advantages).numpy()
        num_steps, num_envs = rollout.actions.shape[:2]
        flat = lambda x: tf.convert_to_tensor(x.reshape((num_steps * num_envs,) + x.shape[2:]))  # noqa: E731
        data = [flat(x) for x in (rollout.observations, rollout.actions, rollout.log_probs,
                                  advantages, returns)]
        history = [self._train_step(*(tf.gather(x, indices) for x in data))
                   for indices in self.minibatches(num_steps, num_envs)]
        metrics = {name: float(np.mean([m[name] for m in history])) for name in history[0]}
        assert set(metrics) == LOSS_KEYS | {"gradient_norm"}, set(metrics)
        variance = np.var(returns)
        metrics["explained_variance"] = float(1 - np.var(returns - rollout.values) / variance) if variance else 0.0
        return metrics


register_learner(PPOLearner, "ppo")
