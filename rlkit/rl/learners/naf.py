"""Normalized advantage functions (Gu et al. 2016): Q-learning for continuous actions.

    Q(s, a) = V(s) - 1/2 (a - mu(s))^T P(s) (a - mu(s)),   P(s) = L(s) L(s)^T

with L lower-triangular, its diagonal made positive by exp, so Q is a concave quadratic in a
whose maximum, mu(s), is the greedy action and whose value there is V(s): the bootstrap
max_a' Q(s', a') is the target network's V(s'). The loss is `naf_loss`, a pure function of
tensors; `NAFLearner` (base_algo "naf") explores around mu with Gaussian noise or temporally
correlated Ornstein-Uhlenbeck noise (`exploration_noise`), learns from rewards times
`reward_scale`, and updates the target network softly (rate `target_update_rate`) every
`target_update_period` agent steps.
`rlkit.rl.loops.off_policy.train_off_policy` drives it, on the same replay memory as DQN.
"""

import gin
import gymnasium as gym
import keras
import numpy as np
import tensorflow as tf
from keras import layers

from rlkit.models.optimizers import make_optimizer
from rlkit.models.policy_networks import torso
from rlkit.rl.learners.learner import register_learner
from rlkit.rl.learners.policy_export import action_count, export_policy
from rlkit.rl.learners.q_learning import learn_from_replay, target_updater
from rlkit.rl.learners.schedules import linear_decay

LOSS_KEYS = frozenset({"loss", "q_values", "td_error"})


def naf_q_values(values, means, lower, actions, curvature_floor=0.0):
    """Q(s, a) [B] from V [B], mu [B, A], L [B, A, A] (lower-triangular) and actions [B, A], with
    P = L L^T + curvature_floor x I: Q curves down at least that much in every action direction."""
    difference = (actions - means)[:, :, None]                      # [B, A, 1]
    projected = tf.matmul(lower, difference, transpose_a=True)      # L^T (a - mu)
    floor = curvature_floor * tf.reduce_sum(tf.square(difference), axis=[1, 2])
    return values - 0.5 * (tf.reduce_sum(tf.square(projected), axis=[1, 2]) + floor)


def ornstein_uhlenbeck_step(noise, theta, normal):
    """The next noise of a zero-mean Ornstein-Uhlenbeck process of unit stationary variance, from
    the last and a standard normal draw: each step keeps 1 - theta of the last noise, so a push one
    way lasts about 1/theta steps (where independent noise averages out, a long push can carry a
    car up a hill)."""
    keep = 1.0 - theta
    return keep * noise + np.sqrt(1.0 - keep ** 2) * normal


def naf_loss(q_values, targets, weights):
    """Weighted mean squared TD error (Gu et al. 2016); returns (loss, metrics, td_errors [B])."""
    assert all(x.shape.rank == 1 for x in (q_values, targets, weights)), [x.shape for x in (q_values, targets, weights)]
    td_errors = targets - q_values
    loss = tf.reduce_mean(weights * tf.square(td_errors))
    metrics = {"loss": loss, "q_values": tf.reduce_mean(q_values), "td_error": tf.reduce_mean(tf.abs(td_errors))}
    return loss, metrics, td_errors


class NAFHead(layers.Layer):
    """V [B], mu [B, A] (tanh, scaled to the action bounds), L [B, A, A] and mu's values before
    the tanh [B, A] (what `mean_penalty` holds near 0) from features."""

    def __init__(self, low, high, **kwargs):
        super().__init__(**kwargs)
        self.size = len(low)
        self.center, self.half_range = (high + low) / 2, (high - low) / 2
        self.value = layers.Dense(1)
        self.mean = layers.Dense(self.size)  # before the tanh
        self.entries = layers.Dense(self.size * (self.size + 1) // 2)

    def call(self, features):
        size = self.size
        entries = self.entries(features)                                # [B, A(A+1)/2]
        rows, columns = np.tril_indices(size)
        entries = tf.where(tf.constant(rows == columns), tf.exp(tf.clip_by_value(entries, -10.0, 5.0)), entries)
        # L's A x A places, row by row: 0 above the diagonal, else the entry for that place.
        places = np.zeros((size, size), np.int64)
        places[rows, columns] = np.arange(1, len(rows) + 1)
        padded = tf.concat([tf.zeros_like(entries[:, :1]), entries], axis=1)
        lower = tf.reshape(tf.gather(padded, places.reshape(-1), axis=1), [-1, size, size])
        before_tanh = self.mean(features)
        mean = self.center + self.half_range * keras.ops.tanh(before_tanh)
        return keras.ops.squeeze(self.value(features), -1), mean, lower, before_tanh


def naf_network(hparams, observation_shape, observation_dtype, action_space):
    inputs, features = torso(hparams.policy_network, observation_shape, observation_dtype, hparams)
    head = NAFHead(action_space.low.astype(np.float32), action_space.high.astype(np.float32), name="naf")
    return keras.Model(inputs, head(features), name=f"{hparams.policy_network}_naf")


class NAFPolicy(tf.Module):
    """Acts with mu(s) plus Gaussian noise of temperature x `exploration` x the half action range
    (greedy at temperature 0), clipped to the bounds; the actor-critics' `act` signature, with
    `value` V(s) and a `log_prob` of 0 (the noise is not a learned distribution)."""

    def __init__(self, network, action_space, observation_shape, observation_dtype, seed):
        super().__init__()
        self.network = network
        self.rng = tf.random.Generator.from_seed(seed)
        self.action_count = tf.Variable(action_count(action_space), trainable=False, name="action_count")
        self.low, self.high = action_space.low.astype(np.float32), action_space.high.astype(np.float32)
        spec = tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype, name="observation")
        self.act = tf.function(self._act, input_signature=[spec, tf.TensorSpec((), tf.float32, name="temperature")])

    def _act(self, observation, temperature):
        value, mean = self.network(observation, training=False)[:2]
        noise = temperature * (self.high - self.low) / 2 * self.rng.normal(tf.shape(mean))
        action = tf.clip_by_value(mean + noise, self.low, self.high)
        return {"action": action, "log_prob": tf.zeros_like(value), "value": value}


class NAFLearner:
    """A NAF network and its target network trained by Q-learning on replay batches."""

    off_policy = True  # trained by rlkit.rl.loops.off_policy.train_off_policy

    def __init__(self, hparams, observation_shape, observation_dtype, action_space, seed):
        if not (isinstance(action_space, gym.spaces.Box) and len(action_space.shape) == 1):
            raise ValueError(f"NAF needs a 1-D continuous action space, not {action_space}: use dqn for discrete ones")
        self.hparams = hparams
        self.network = naf_network(hparams, observation_shape, observation_dtype, action_space)
        self.target_network = naf_network(hparams, observation_shape, observation_dtype, action_space)
        self.target_network.set_weights(self.network.get_weights())
        self._sync_target = target_updater(self.target_network, self.network, hparams.target_update_rate)
        self.policy = NAFPolicy(self.network, action_space, observation_shape, observation_dtype, seed)
        self.half_range = (action_space.high - action_space.low).astype(np.float32) / 2
        self.correlated_noise = None  # Ornstein-Uhlenbeck's state [num_envs, A]; starts at 0 (also on resume)
        with gin.config_scope("naf"):  # Adam, as the paper, unless gin binds another
            self.optimizer = make_optimizer(hparams.learning_rate)
        self.optimizer.build(self.network.trainable_variables)
        observations = tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype)
        actions = tf.TensorSpec((None, action_space.shape[0]), tf.float32)
        vector = tf.TensorSpec([None], tf.float32)
        self._compiled_train_step = tf.function(self._train_step).get_concrete_function(
            observations, actions, vector, vector, observations, vector)

    def checkpointables(self):
        return dict(network=self.network, target_network=self.target_network, optimizer=self.optimizer,
                    policy_rng=self.policy.rng)

    def set_learning_rate(self, learning_rate):
        self.optimizer.learning_rate.assign(learning_rate)

    def act(self, observation, temperature=1.0):
        """Actions [B, A]: mu(s) at temperature 0, else with the final exploration noise x temperature."""
        scale = temperature * self.hparams.exploration_noise_final
        return self.policy.act(tf.convert_to_tensor(observation), tf.constant(scale, tf.float32))["action"].numpy()

    def exploration_at(self, agent_steps):
        """The training noise scale (a share of the half action range) after `agent_steps`."""
        hparams = self.hparams
        return linear_decay(hparams.exploration_noise_start, hparams.exploration_noise_final,
                            hparams.exploration_noise_decay_steps, agent_steps)

    def explore(self, observation, noise_scale):
        """Training actions: mu(s) plus noise of standard deviation `noise_scale` x the half action
        range, independent per step ("gaussian") or an Ornstein-Uhlenbeck process per env."""
        observation = tf.convert_to_tensor(observation)
        if self.hparams.exploration_noise == "gaussian":
            return self.policy.act(observation, tf.constant(noise_scale, tf.float32))["action"].numpy()
        greedy = self.policy.act(observation, tf.constant(0.0))["action"].numpy()
        if self.correlated_noise is None:
            self.correlated_noise = np.zeros_like(greedy)
        normal = self.policy.rng.normal(greedy.shape).numpy()  # the checkpointed generator
        self.correlated_noise = ornstein_uhlenbeck_step(self.correlated_noise, self.hparams.ou_theta, normal)
        return np.clip(greedy + noise_scale * self.half_range * self.correlated_noise,
                       self.policy.low, self.policy.high)

    def sync_target(self):
        self._sync_target()

    def export(self, path):
        export_policy(self.policy, path)

    def _train_step(self, observations, actions, returns, discounts, next_observations, weights):
        next_values = self.target_network(next_observations, training=False)[0]
        targets = tf.stop_gradient(returns + discounts * next_values)
        with tf.GradientTape() as tape:
            values, means, lower, before_tanh = self.network(observations, training=True)
            # A curvature floor keeps a TD gradient on mu where L's diagonal has shrunk to its clip
            # (exp of -10: no gradient there), which left MountainCar's failing seeds at no push.
            q_values = naf_q_values(values, means, lower, actions, self.hparams.curvature_floor)
            loss, metrics, td_errors = naf_loss(q_values, targets, weights)
            # Where tanh saturates its gradient vanishes and mu stays at a bound whatever the TD
            # errors say (Pendulum's failing seeds: full torque one way in every state); this
            # pulls mu's values before the tanh back toward 0, at no cost inside its linear range.
            loss += self.hparams.mean_penalty * tf.reduce_mean(tf.square(before_tanh))
        variables = self.network.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return metrics, td_errors

    def update(self, batch):
        """One gradient step on a replay batch; returns the metrics and the batch's `td_errors`."""
        batch = dict(batch, rewards=batch["rewards"] * np.float32(self.hparams.reward_scale))
        return learn_from_replay(self._compiled_train_step, batch, self.hparams.gamma, tf.float32, LOSS_KEYS)


register_learner(NAFLearner, "naf")
