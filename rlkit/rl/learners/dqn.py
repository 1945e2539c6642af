"""Deep Q-networks: Nature DQN (Mnih et al. 2015) and its options, Double DQN (van Hasselt et al.
2016), the dueling head (Wang et al. 2016), n-step returns and prioritized replay (Schaul et al.
2016).

The loss is `dqn_loss`, a pure function of tensors, on targets from `q_learning_targets`;
`DQNLearner` (registered as base_algo "dqn") holds the online and target networks, the
optimizer and the random state, acts epsilon-greedily and updates on replay batches
(`rlkit.data_generators.replay`). `rlkit.rl.loops.off_policy.train_off_policy` drives it.
"""

import functools

import gin
import gymnasium as gym
import keras
import numpy as np
import tensorflow as tf

from rlkit.models.optimizers import make_optimizer
from rlkit.models.policy_networks import q_network
from rlkit.rl.learners.learner import register_learner
from rlkit.rl.learners.policy_export import action_count, export_policy
from rlkit.rl.learners.q_learning import learn_from_replay, target_updater
from rlkit.rl.learners.schedules import linear_decay

LOSS_KEYS = frozenset({"loss", "q_values", "td_error"})


def q_learning_targets(next_q_target, next_q_online, returns, discounts, double):
    """Bootstrapped targets [B]: returns + discounts * Q_target(s', a'), with a' the target
    network's greedy action (DQN) or the online network's (Double DQN). next_q_*: [B, A]."""
    if double:
        next_actions = tf.argmax(next_q_online, axis=-1, output_type=tf.int32)
    else:
        next_actions = tf.argmax(next_q_target, axis=-1, output_type=tf.int32)
    next_values = tf.gather(next_q_target, next_actions, batch_dims=1)
    return tf.stop_gradient(returns + discounts * next_values)


def dqn_loss(q_values, actions, targets, weights):
    """The DQN objective on a batch: q_values [B, A], actions [B], targets [B], importance
    weights [B] (ones without prioritized replay). Returns (loss, metrics, td_errors [B]).

    loss = mean(weights * huber(targets - Q(s, a))), the Huber loss with delta 1 being Nature
    DQN's error clipped to [-1, 1].
    """
    assert q_values.shape.rank == 2 and all(x.shape.rank == 1 for x in (actions, targets, weights)), \
        [x.shape for x in (q_values, actions, targets, weights)]
    taken = tf.gather(q_values, actions, batch_dims=1)
    td_errors = targets - taken
    absolute = tf.abs(td_errors)
    huber = tf.where(absolute <= 1.0, 0.5 * tf.square(td_errors), absolute - 0.5)
    loss = tf.reduce_mean(weights * huber)
    metrics = {"loss": loss, "q_values": tf.reduce_mean(taken), "td_error": tf.reduce_mean(absolute)}
    return loss, metrics, td_errors


def epsilon_at(hparams, agent_steps):
    """Exploration: epsilon falls linearly from epsilon_start to epsilon_final over the first
    epsilon_decay_steps agent steps, then stays."""
    return linear_decay(hparams.epsilon_start, hparams.epsilon_final, hparams.epsilon_decay_steps, agent_steps)


class QPolicy(tf.Module):
    """Epsilon-greedy acting on a Q-network, exported with the actor-critics' `act` signature:
    temperature 0 acts greedily, temperature t > 0 with epsilon = min(1, t x eval_epsilon), so
    the evaluation grid's temperature 1 is the set's evaluation epsilon. `log_prob` is the
    action's probability under that epsilon-greedy policy; `value` is max_a Q."""

    def __init__(self, network, num_actions, observation_shape, observation_dtype, eval_epsilon, seed):
        super().__init__()
        self.network = network
        self.rng = tf.random.Generator.from_seed(seed)
        self.action_count = tf.Variable(num_actions, trainable=False, name="action_count")
        self.eval_epsilon = tf.Variable(eval_epsilon, trainable=False, dtype=tf.float32, name="eval_epsilon")
        spec = tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype, name="observation")
        self.act = tf.function(self._act, input_signature=[spec, tf.TensorSpec((), tf.float32, name="temperature")])
        # Training's greedy actions: a concrete function (no per-call argument binding), XLA-
        # compiled: 0.42 ms for one Pong frame stack on this CPU against 0.71 ms for `act`.
        self.greedy_action = tf.function(self._greedy_action, jit_compile=True).get_concrete_function(spec)

    def _act(self, observation, temperature):
        return self._act_epsilon(observation, tf.minimum(1.0, temperature * self.eval_epsilon))

    def _greedy_action(self, observation):
        return tf.argmax(self.network(observation, training=False), axis=-1, output_type=tf.int32)

    def _act_epsilon(self, observation, epsilon):
        q_values = self.network(observation, training=False)
        batch, num_actions = tf.shape(q_values)[0], tf.shape(q_values)[1]
        greedy = tf.argmax(q_values, axis=-1, output_type=tf.int32)
        explore = self.rng.uniform([batch]) < epsilon
        random = self.rng.uniform([batch], 0, num_actions, dtype=tf.int32)
        action = tf.where(explore, random, greedy)
        uniform = epsilon / tf.cast(num_actions, tf.float32)
        probability = tf.where(action == greedy, 1.0 - epsilon + uniform, uniform)
        return {"action": action, "log_prob": tf.math.log(probability), "value": tf.reduce_max(q_values, axis=-1)}


class DQNLearner:
    """A Q-network and its target network trained by Q-learning on replay batches."""

    off_policy = True  # trained by rlkit.rl.loops.off_policy.train_off_policy

    def __init__(self, hparams, observation_shape, observation_dtype, action_space, seed):
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"DQN needs discrete actions, not {action_space}: use naf for continuous ones")
        self.hparams = hparams
        num_actions = self.num_actions = action_count(action_space)
        build = functools.partial(q_network, hparams.policy_network, observation_shape, observation_dtype,
                                  num_actions, hparams, dueling=hparams.dueling)
        self.network, self.target_network = build(), build()
        self.target_network.set_weights(self.network.get_weights())
        self._sync_target = target_updater(self.target_network, self.network)
        self.policy = QPolicy(self.network, num_actions, observation_shape, observation_dtype,
                              hparams.eval_epsilon, seed)
        self._uniform_draws = np.zeros([0], np.float32)  # exploration's draws, made in blocks
        # Nature DQN's RMSProp unless gin binds another optimizer (`dqn/make_optimizer.optimizer`).
        default = functools.partial(keras.optimizers.RMSprop, rho=hparams.rmsprop_decay,
                                    epsilon=hparams.optimizer_epsilon, centered=hparams.rmsprop_centered)
        with gin.config_scope("dqn"):
            self.optimizer = make_optimizer(hparams.learning_rate, default=default)
        self.optimizer.build(self.network.trainable_variables)
        # Called through its concrete function: a tf.function's per-call dispatch cost more than
        # a CartPole update itself. XLA-compiled: on this 2-core CPU it made the Nature-CNN update
        # ~15% faster (scripts/bench_dqn.py), unlike PPO's (see Performance notes).
        observations = tf.TensorSpec((None,) + tuple(observation_shape), observation_dtype)
        self._compiled_train_step = tf.function(self._train_step, jit_compile=True).get_concrete_function(
            observations, tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.float32),
            tf.TensorSpec([None], tf.float32), observations, tf.TensorSpec([None], tf.float32))

    def checkpointables(self):
        """What a checkpoint must hold to continue training."""
        return dict(network=self.network, target_network=self.target_network, optimizer=self.optimizer,
                    policy_rng=self.policy.rng)

    def set_learning_rate(self, learning_rate):
        self.optimizer.learning_rate.assign(learning_rate)

    def act(self, observation, temperature=1.0):
        """Actions [B]: greedy at temperature 0, else epsilon-greedy at the evaluation epsilon."""
        return self.policy.act(tf.convert_to_tensor(observation), tf.constant(temperature, tf.float32))["action"].numpy()

    def exploration_at(self, agent_steps):
        """The training epsilon after `agent_steps`."""
        return epsilon_at(self.hparams, agent_steps)

    def explore(self, observation, epsilon):
        """Actions [B], epsilon-greedy at the training schedule's `epsilon`. The Q-network runs
        only when some action is not drawn at random: early in training, when epsilon is near 1,
        almost never (as stable-baselines3 and Dopamine act). It runs on the whole batch, one
        shape for XLA."""
        draws = self._uniform(2 * len(observation)).reshape(2, len(observation))
        actions = np.minimum(draws[1] * self.num_actions, self.num_actions - 1).astype(np.int32)
        greedy = draws[0] >= epsilon
        if greedy.any():
            actions[greedy] = self.policy.greedy_action(tf.convert_to_tensor(observation)).numpy()[greedy]
        return actions

    def _uniform(self, count):
        """`count` uniform draws in [0, 1) from the policy's checkpointed generator, made 4,096 at a
        time: a TensorFlow call per env step cost more than the rest of a step at epsilon 1."""
        if len(self._uniform_draws) < count:
            block = self.policy.rng.uniform([max(count, 4096)]).numpy()
            self._uniform_draws = np.concatenate([self._uniform_draws, block])
        draws, self._uniform_draws = self._uniform_draws[:count], self._uniform_draws[count:]
        return draws

    def sync_target(self):
        self._sync_target()

    def export(self, path):
        export_policy(self.policy, path)

    def _train_step(self, observations, actions, returns, discounts, next_observations, weights):
        next_q_target = self.target_network(next_observations, training=False)
        next_q_online = self.network(next_observations, training=False) if self.hparams.double else next_q_target
        targets = q_learning_targets(next_q_target, next_q_online, returns, discounts, self.hparams.double)
        with tf.GradientTape() as tape:
            loss, metrics, td_errors = dqn_loss(self.network(observations, training=True), actions, targets, weights)
        variables = self.network.trainable_variables
        gradients = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return metrics, td_errors

    def update(self, batch):
        """One gradient step on a replay batch; returns the metrics and the batch's `td_errors`."""
        return learn_from_replay(self._compiled_train_step, batch, self.hparams.gamma, tf.int32, LOSS_KEYS)


register_learner(DQNLearner, "dqn")
