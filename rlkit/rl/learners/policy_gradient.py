"""Vanilla policy gradients with a learned value baseline: REINFORCE (Williams 1992) and A2C, the
synchronous advantage actor-critic (Mnih et al. 2016, as OpenAI baselines runs it).

Both minimise `policy_gradient_loss`, a pure function of tensors:

    loss = -mean(log pi(a|s) * A) + value_coef * mean((V(s) - R)^2) - entropy_coef * mean(H[pi(.|s)])

and differ only in where the returns R and advantages A come from (`rlkit.rl.learners.returns`):

* REINFORCE (base_algo "reinforce"): whole episodes, Monte-Carlo returns, A = R - V(s).
* A2C (base_algo "a2c"): batches of `rollout_length` steps of every env, with n-step returns
  bootstrapped from the value after the rollout (A = R - V(s)) or GAE; or whole episodes.

`PolicyGradientLearner` holds the actor-critic network, the optimizer and the random state;
the on-policy loop (`rlkit.rl.loops.on_policy.train_on_policy`) drives it as it drives PPO. With
`train_on="episodes"` the steps of episodes still running at the end of a rollout wait for the
next rollout: an update sees only episodes that ended, and none is cut in two.
"""

import functools

import gin
import keras
import numpy as np
import tensorflow as tf

from rlkit.models.optimizers import Adam, make_optimizer
from rlkit.models.registry import get_model
from rlkit.rl.learners.actor_critic import ActorCriticLearner
from rlkit.rl.learners.learner import register_learner
from rlkit.rl.learners.policy_export import Policy, policy_distribution
from rlkit.rl.learners.returns import discounted_returns, gae

LOSS_KEYS = frozenset({"loss", "policy_loss", "value_loss", "entropy"})
# What an update needs of a rollout's steps, time first.
_STEP_COLUMNS = ("observations", "actions", "values", "rewards", "dones")


def policy_gradient_loss(log_probs, entropy, values, advantages, returns, value_coef, entropy_coef):
    """The actor-critic objective on a batch; all inputs are [B]. Returns (loss, metrics).

    advantages and returns are constants (computed from the acting values): only log_probs,
    entropy and values carry gradients. The value loss is the plain mean squared error (OpenAI
    baselines' A2C: vf_coef 0.5 on it).
    """
    assert log_probs.shape.rank == 1 and all(
        x.shape == log_probs.shape for x in (entropy, values, advantages, returns)), \
        [x.shape for x in (log_probs, entropy, values, advantages, returns)]
    policy_loss = -tf.reduce_mean(log_probs * advantages)
    value_loss = tf.reduce_mean(tf.square(values - returns))
    entropy = tf.reduce_mean(entropy)
    loss = policy_loss + value_coef * value_loss - entropy_coef * entropy
    return loss, {"loss": loss, "policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy}


def returns_and_advantages(hparams, rewards, values, dones, last_values):
    """(returns, advantages) [T, N] of a rollout by the set's `advantage` estimator:
    "returns" (discounted returns to the episode's end or bootstrapped from `last_values` at the
    rollout's end; Monte-Carlo returns when every episode ended) or "gae" (with gae_lambda)."""
    if hparams.advantage == "gae":
        advantages, returns = gae(rewards, values, dones, last_values, hparams.gamma, hparams.gae_lambda)
        return returns, advantages
    returns = discounted_returns(rewards, dones, last_values, hparams.gamma)
    return returns, returns - values.astype(np.float32)


class PolicyGradientLearner(ActorCriticLearner):
    """An actor-critic network trained by REINFORCE or A2C, with its optimizer and random state."""

    def __init__(self, hparams, observation_shape, observation_dtype, action_space, seed, name, default_optimizer):
        self.hparams = hparams
        self.network = get_model(hparams.policy_network)(observation_shape, observation_dtype, action_space, hparams)
        self.policy = Policy(self.network, action_space, observation_shape, observation_dtype, seed)
        with gin.config_scope(name):  # `a2c/make_optimizer.optimizer = ...` swaps it
            self.optimizer = make_optimizer(hparams.learning_rate, default=default_optimizer)
        self.optimizer.build(self.network.trainable_variables)
        self._held = None  # train_on="episodes": per env, the steps of its episode still running
        action_spec = (tf.TensorSpec([None], tf.int32) if self.policy.discrete
                       else tf.TensorSpec([None, action_space.shape[0]], tf.float32))
        # One trace for every batch size: whole-episode batches vary in length.
        self._train_step = tf.function(self._train_step, input_signature=[
            tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype), action_spec,
            tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32)])

    def checkpointables(self):
        """What a checkpoint must hold to continue training."""
        return dict(network=self.network, optimizer=self.optimizer, policy_rng=self.policy.rng)

    def _train_step(self, observations, actions, advantages, returns):
        hparams = self.hparams
        if hparams.normalize_advantages:
            advantages = (advantages - tf.reduce_mean(advantages)) / (tf.math.reduce_std(advantages) + 1e-8)
        with tf.GradientTape() as tape:
            params, values = self.network(observations, training=True)
            distribution = policy_distribution(params, self.policy.discrete)
            loss, metrics = policy_gradient_loss(distribution.log_prob(actions), distribution.entropy(), values,
                                                 advantages, returns, hparams.value_coef, hparams.entropy_coef)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)
        gradients, metrics["gradient_norm"] = tf.clip_by_global_norm(gradients, hparams.max_gradient_norm)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return metrics

    def ended_episodes(self, rollout):
        """{column: [M, 1]} the steps of every episode that ended by the end of `rollout`, with the
        steps held from earlier rollouts in front, envs one after another; the steps of episodes
        still running are held for the next call. A rollout that started with reset envs
        (`rollout.restarted`) continues nothing held."""
        if rollout.restarted:
            self._held = None
        ended = {name: [] for name in _STEP_COLUMNS}
        held = []
        for env in range(rollout.rewards.shape[1]):
            steps = {name: getattr(rollout, name)[:, env] for name in _STEP_COLUMNS}
            if self._held is not None:
                steps = {name: np.concatenate([self._held[env][name], steps[name]]) for name in _STEP_COLUMNS}
            ends = np.flatnonzero(steps["dones"])
            cut = ends[-1] + 1 if len(ends) else 0
            for name in _STEP_COLUMNS:
                ended[name].append(steps[name][:cut])
            held.append({name: steps[name][cut:] for name in _STEP_COLUMNS})
        self._held = held
        return {name: np.concatenate(parts)[:, None] for name, parts in ended.items()}

    def update(self, rollout):
        """One gradient step on a Rollout (train_on="steps") or on the episodes that ended by its
        end (train_on="episodes"; {} while none has); returns the step's metrics."""
        hparams = self.hparams
        if hparams.train_on == "episodes":
            batch = self.ended_episodes(rollout)
            num_episodes = int(batch["dones"].sum())
            if not num_episodes:
                return {}
            last_values = np.zeros(1, np.float32)  # every episode in the batch ended
        else:
            batch = {name: getattr(rollout, name) for name in _STEP_COLUMNS}
            last_values = rollout.last_values
        returns, advantages = returns_and_advantages(hparams, batch["rewards"], batch["values"], batch["dones"],
                                                     last_values)
        num_samples = batch["rewards"].size
        flat = lambda x: x.reshape((num_samples,) + x.shape[2:])  # noqa: E731
        metrics = self._train_step(flat(batch["observations"]), flat(batch["actions"]), flat(advantages),
                                   flat(returns))
        metrics = {name: float(value) for name, value in metrics.items()}
        assert set(metrics) == LOSS_KEYS | {"gradient_norm"}, set(metrics)
        variance = np.var(returns)
        metrics["explained_variance"] = float(1 - np.var(returns - batch["values"]) / variance) if variance else 0.0
        return metrics


@register_learner(PolicyGradientLearner)
def reinforce(hparams, observation_shape, observation_dtype, action_space, seed):
    """REINFORCE with a value baseline on `hparams` (reinforce_cartpole_params and its kind);
    Adam unless gin binds another optimizer (`reinforce/make_optimizer.optimizer`)."""
    return PolicyGradientLearner(hparams, observation_shape, observation_dtype, action_space, seed, "reinforce",
                                 default_optimizer=Adam)


@register_learner(PolicyGradientLearner)
def a2c(hparams, observation_shape, observation_dtype, action_space, seed):
    """A2C on `hparams` (a2c_atari_params and its kind); RMSProp as in OpenAI baselines
    (squared-gradient decay `rmsprop_decay`, epsilon `optimizer_epsilon`) unless gin binds
    another optimizer (`a2c/make_optimizer.optimizer`)."""
    default = functools.partial(keras.optimizers.RMSprop, rho=hparams.rmsprop_decay,
                                epsilon=hparams.optimizer_epsilon, centered=hparams.rmsprop_centered)
    return PolicyGradientLearner(hparams, observation_shape, observation_dtype, action_space, seed, "a2c",
                                 default_optimizer=default)
