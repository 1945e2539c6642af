"""DreamerV2's actor-critic in imagination (Hafner et al. 2021): the loss math, as pure functions.

From every posterior state of a training batch (or `imagine_starts` of them, drawn uniformly:
rlkit's CPU variants; DreamerV2 takes all) the world model (rlkit.models.rssm) imagines H
steps with the actor's actions: states s_0 .. s_H (s_0 the posterior state, gradients stopped),
with the reward r_t and discount gamma_t (gamma x the continue head's probability) that the
heads give at s_t, and values v_t of a slow target critic (a hard copy every
`target_update_period` updates). Then:

    lambda-return  V_t = r_{t+1} + gamma_{t+1} ((1 - lambda) v_{t+1} + lambda V_{t+1}),  V_H = v_H
    weights        w_0 = 1,  w_t = gamma_1 ... gamma_t   (an imagined episode that ended weighs 0)
    actor          -w_t [rho log pi(a_t | s_t) sg(V_t - v(s_t)) + (1 - rho) V_t + eta H[pi(. | s_t)]]
    critic         w_t (v(s_t) - sg(V_t))^2 / 2

rho = 1 (REINFORCE, entropy eta 1e-3) for discrete actions, rho = 0 (gradients of V through the
dynamics, eta 1e-4) for continuous ones, whose actions are tanh-squashed Gaussian samples in
[-1, 1] (scaled to the env's bounds only where the env gets them), reparameterised so that the
gradient of V reaches the actor through the world model's dynamics.

DreamerV3's changes (Hafner et al. 2023), each an option of the actor-critic's set: the critic
as a two-hot categorical over symlog bins (`critic_head`), trained by cross-entropy on the
lambda-returns plus `slow_critic_regularizer` x cross-entropy on the slow critic's values; the
slow critic an EMA of the critic (`slow_critic_rate` each update) rather than a copy every
`target_update_period`; advantages divided by max(1, S), S the EMA of the returns' 5-95
percentile range (`return_normalization`: "percentile"); the actor's action probabilities
mixed with `actor_unimix` of uniform, in imagination and in the policy alike; the returns
bootstrapped from, and the advantages taken against, the critic being trained rather than the
slow one (`returns_critic`: "online"; the slow critic then only regularises); and an imagined
step's continuation the continue head's mode, 0 or 1, not its probability (`imagined_continue`).
"""

import math

import gymnasium as gym
import tensorflow as tf

from rlkit.models.twohot import NUM_BINS, bins, twohot_loss, twohot_mean

RETURN_SCALE_RATE = 0.01  # DreamerV3's EMA rate of the return percentiles (retnorm: rate 0.01)


def lambda_returns(rewards, values, discounts, lam):
    """lambda-returns [H, B] of an imagined trajectory, time first.

    rewards, discounts: [H, B], the reward and discount at s_1 .. s_H (after each action);
    values: [H + 1, B], the target critic's values of s_0 .. s_H. V_H bootstraps from v_H."""
    horizon = rewards.shape[0]
    next_return = values[-1]
    returns = []
    for t in reversed(range(horizon)):
        next_return = rewards[t] + discounts[t] * ((1.0 - lam) * values[t + 1] + lam * next_return)
        returns.append(next_return)
    return tf.stack(returns[::-1], 0)


def imagined_discounts(continue_logits, gamma, continuation):
    """gamma x each imagined step's continuation, from the continue head's logits: its
    probability ("mean", DreamerV2) or its mode ("mode", DreamerV3: 1 where continuing is more
    likely than not, else 0, so an imagined episode either goes on undiscounted by doubt or ends)."""
    if continuation == "mode":
        return gamma * tf.cast(continue_logits > 0.0, tf.float32)
    return gamma * tf.sigmoid(continue_logits)


def imagination_starts(num_states, count, seed):
    """Indices of `count` of a batch's `num_states` posterior states, drawn uniformly without
    replacement (all of them when count >= num_states): where imagination starts."""
    scores = tf.random.stateless_uniform([num_states], seed)
    return tf.math.top_k(scores, k=tf.minimum(count, num_states), sorted=False).indices


def trajectory_weights(discounts):
    """[H, B] weights of s_0 .. s_{H-1}: 1, then the cumulative product of the discounts before
    each state, so states after a predicted episode end count for nothing."""
    ones = tf.ones_like(discounts[:1])
    return tf.stop_gradient(tf.math.cumprod(tf.concat([ones, discounts[:-1]], 0), axis=0))


def actor_loss(log_probs, entropy, returns, baselines, weights, rho, entropy_coef, scale=1.0):
    """The actor's loss over s_0 .. s_{H-1} [H, B]; returns (loss, metrics). rho 1: REINFORCE
    with the critic as baseline; rho 0: the returns' own gradient through the dynamics. Returns
    and baselines count divided by `scale` (DreamerV3's return normalisation; 1: DreamerV2)."""
    advantages = tf.stop_gradient((returns - baselines) / scale)
    objective = rho * log_probs * advantages + (1.0 - rho) * returns / scale + entropy_coef * entropy
    loss = -tf.reduce_mean(weights * objective)
    # actor_advantage: the size of the REINFORCE signal, which the entropy bonus (entropy_coef x
    # actor_entropy) competes with: where it shrinks below that, the policy drifts to uniform.
    return loss, dict(actor_loss=loss, actor_entropy=tf.reduce_mean(entropy),
                      actor_advantage=tf.reduce_mean(weights * tf.abs(advantages)),
                      imagined_return=tf.reduce_mean(returns))


def action_logits(actor, features, unimix):
    """The actor's logits over discrete actions at `features`, with `unimix` of uniform mixed into
    its probabilities (DreamerV3: no action falls below unimix / actions, so the policy never
    becomes deterministic and REINFORCE's log-probabilities stay finite)."""
    from rlkit.models.rssm import uniform_mix

    return uniform_mix(actor(features), unimix)


def quantile(values, q):
    """The q-quantile of all of `values`, interpolating linearly between order statistics (as numpy's)."""
    flat = tf.sort(tf.reshape(values, [-1]))
    position = q * tf.cast(tf.size(flat) - 1, tf.float32)
    lower = tf.cast(tf.floor(position), tf.int32)
    upper = tf.minimum(lower + 1, tf.size(flat) - 1)
    fraction = position - tf.floor(position)
    return tf.gather(flat, lower) * (1.0 - fraction) + tf.gather(flat, upper) * fraction


def return_scale(returns, low, high, rate, low_quantile=0.05, high_quantile=0.95):
    """DreamerV3's return normalisation: the EMAs (rate `rate`, from `low`, `high`) of the
    returns' 5th and 95th percentiles, and the scale max(1, high - low) that advantages are
    divided by; large returns are scaled down, small ones never up (sparse rewards keep their
    signal). Returns (scale, new low, new high)."""
    returns = tf.stop_gradient(returns)
    low = (1.0 - rate) * low + rate * quantile(returns, low_quantile)
    high = (1.0 - rate) * high + rate * quantile(returns, high_quantile)
    return tf.maximum(1.0, high - low), low, high


def continuous_parameters(params, min_std=0.1):
    """(mean, std) of the actor's Gaussian before tanh, from its outputs [..., 2A]: DreamerV2's
    tanh-normal (mean 5 tanh(mean / 5), std 2 sigmoid(std / 2) + min_std)."""
    mean, raw_std = tf.split(params, 2, axis=-1)
    return 5.0 * tf.tanh(mean / 5.0), 2.0 * tf.sigmoid(raw_std / 2.0) + min_std


def sample_continuous(params, temperature, seed):
    """Actions [..., A] in [-1, 1]: tanh(mean + temperature x std x noise), with their
    log-probabilities (change of variables through tanh) and the Gaussian's entropy [...]."""
    mean, std = continuous_parameters(params)
    noise = tf.random.stateless_normal(tf.shape(mean), seed)
    actions = tf.tanh(mean + temperature * std * noise)
    log_probs = tf.reduce_sum(-0.5 * tf.square(noise) - tf.math.log(std) - 0.5 * math.log(2 * math.pi)
                              - tf.math.log(1.0 - tf.square(actions) + 1e-6), -1)
    entropy = tf.reduce_sum(tf.math.log(std) + 0.5 * math.log(2 * math.pi * math.e), -1)
    return actions, log_probs, entropy


def critic_loss(values, returns, weights, slow_values=None, regularizer=0.0):
    """The critic's regression on the lambda-returns over s_0 .. s_{H-1} [H, B], plus
    `regularizer` x its regression on the slow critic's values; returns (loss, metrics)."""
    error = 0.5 * tf.square(values - tf.stop_gradient(returns))
    if regularizer:
        error += regularizer * 0.5 * tf.square(values - tf.stop_gradient(slow_values))
    loss = tf.reduce_mean(weights * error)
    return loss, dict(critic_loss=loss, critic_value=tf.reduce_mean(values))


def twohot_critic_loss(logits, returns, weights, slow_values, regularizer):
    """DreamerV3's critic loss over s_0 .. s_{H-1} (logits [H, B, K]): the cross-entropy with the
    two-hot lambda-returns plus `regularizer` x that with the slow critic's values; returns (loss, metrics)."""
    centres = bins()
    nll = twohot_loss(logits, tf.stop_gradient(returns), centres)
    if regularizer:
        nll += regularizer * twohot_loss(logits, tf.stop_gradient(slow_values), centres)
    loss = tf.reduce_mean(weights * nll)
    return loss, dict(critic_loss=loss, critic_value=tf.reduce_mean(twohot_mean(logits, centres)))


class DreamerAgent:
    """The world model, the actor and the critic (and the critic's slow copy), with their three
    optimizers: `update(batch)` takes one gradient step of each on a batch of stored sequences
    (frames [B, T, H, W, C] uint8, actions, rewards, ends [B, T] and firsts where an episode
    starts inside one), imagining `horizon` steps from every posterior state of the batch.
    Discrete actions train the actor with REINFORCE (rho = 1), continuous ones (a Box action
    space, stored as the env took them) by backpropagating through the dynamics (rho = 0).

    hparams: the actor-critic's values (a dreamer_actor_critic_* set); world_model: the RSSM's;
    pixel_values 0 for a gymnasium env's vector observations; compute_dtype "bfloat16" computes
    every network's hidden layers in bfloat16 (RSSM's docstring).
    """

    def __init__(self, hparams, world_model, frame_shape, action_space, pixel_values, seed, compute_dtype="float32"):
        import keras

        from rlkit.models.optimizers import make_optimizer
        from rlkit.models.rssm import RSSM, policy

        self.hparams = hparams
        self.discrete = isinstance(action_space, gym.spaces.Discrete)
        num_actions = int(action_space.n) if self.discrete else int(action_space.shape[0])
        # Continuous actions are learned in [-1, 1]; the env's bounds (symmetric) scale them.
        self.action_scale = None if self.discrete else tf.constant(action_space.high, tf.float32)
        self.world_model = RSSM(world_model, frame_shape, num_actions, pixel_values, compute_dtype)
        features = world_model.deter_size + world_model.stoch_groups * world_model.stoch_classes

        def head(output, name, zero_output=False):
            return keras.Sequential([keras.Input((features,))]
                                    + [keras.layers.Dense(hparams.actor_critic_units, activation="elu",
                                                          dtype=policy(compute_dtype))
                                       for _ in range(hparams.actor_critic_layers)]
                                    + [keras.layers.Dense(output, kernel_initializer="zeros" if zero_output
                                                          else "glorot_uniform")], name=name)
        actor_outputs = num_actions if self.discrete else 2 * num_actions  # logits, or mean and std
        self.twohot_critic = hparams.critic_head == "twohot"
        critic_outputs = NUM_BINS if self.twohot_critic else 1
        self.actor = head(actor_outputs, "actor")
        self.critic = head(critic_outputs, "critic", zero_output=self.twohot_critic)
        self.target_critic = head(critic_outputs, "target")
        self.target_critic.set_weights(self.critic.get_weights())
        # The critic whose values the returns bootstrap from and the advantages subtract:
        # DreamerV2's slow copy, or DreamerV3's critic being trained (its slow critic only regularises).
        self.returns_critic = self.critic if hparams.returns_critic == "online" else self.target_critic
        self.model_optimizer = self.world_model.make_optimizer()
        self.actor_optimizer = make_optimizer(hparams.actor_learning_rate, epsilon=1e-5,
                                              global_clipnorm=hparams.clip_grad_norm)
        self.critic_optimizer = make_optimizer(hparams.critic_learning_rate, epsilon=1e-5,
                                               global_clipnorm=hparams.clip_grad_norm)
        self.updates = tf.Variable(0, dtype=tf.int64, trainable=False)
        # The EMAs of the returns' 5th and 95th percentiles (return_normalization "percentile").
        self.return_low = tf.Variable(0.0, trainable=False)
        self.return_high = tf.Variable(0.0, trainable=False)
        self.actor_unimix = hparams.get("actor_unimix", 0.0)
        self.seed = tf.random.Generator.from_seed(seed)
        self.policy = self.new_policy(seed + 1)

    def values(self, critic, features):
        """A critic's values [N] of features [N, F]: its output, or its two-hot read-out."""
        outputs = critic(features)
        return twohot_mean(outputs, bins()) if self.twohot_critic else tf.squeeze(outputs, -1)

    def new_policy(self, seed):
        """A DreamerPolicy on this agent's networks, with states of its own."""
        return DreamerPolicy(self.world_model, self.actor, self.world_model.frame_shape, self.action_scale, seed,
                             self.actor_unimix)

    def imagine(self, start):
        """Features [H + 1, N, F] of the states the actor reaches from `start` (h, z) in `horizon`
        steps, and the log-probabilities and entropies [H, N] of its actions.

        Discrete actions: the states do not depend on the actor's weights (its samples are
        indices), so the log-probabilities that REINFORCE differentiates are computed after the
        rollout, from one batched call of the actor on all H x N states, rather than kept from
        the H small calls that sampled them: the same values, and one backward pass instead of H."""
        state, features, actions, log_probs, entropies = start, [self.world_model.features(start)], [], [], []
        for _ in range(self.hparams.horizon):
            seed = self.seed.make_seeds(1)[:, 0]
            if self.discrete:
                logits = action_logits(self.actor, tf.stop_gradient(features[-1]), self.actor_unimix)
                action = tf.cast(tf.squeeze(tf.random.stateless_categorical(logits, 1, seed), -1), tf.int32)
            else:
                params = self.actor(tf.stop_gradient(features[-1]))
                action, log_prob, entropy = sample_continuous(params, 1.0, seed)
                log_probs.append(log_prob)
                entropies.append(entropy)
            actions.append(action)
            state, _ = self.world_model.prior_step(state, action)
            features.append(self.world_model.features(state))
        features = tf.stack(features)
        if not self.discrete:
            return features, tf.stack(log_probs), tf.stack(entropies)
        log_pi = tf.nn.log_softmax(action_logits(
            self.actor, tf.stop_gradient(tf.reshape(features[:-1], [-1, features.shape[-1]])), self.actor_unimix))
        log_probs = tf.gather(log_pi, tf.reshape(tf.stack(actions), [-1]), batch_dims=1)
        entropies = -tf.reduce_sum(tf.exp(log_pi) * log_pi, -1)
        horizon_by_states = tf.shape(features)[:2] - [1, 0]
        return features, tf.reshape(log_probs, horizon_by_states), tf.reshape(entropies, horizon_by_states)

    def imagined_returns(self, start):
        """Imagines from `start` and scores it: features [H + 1, B, F], the actor's log-probs and
        entropies [H, B], the values [H + 1, B] of `returns_critic`, the lambda-returns [H, B] and
        the trajectory weights [H, B] (the world model's heads give rewards and continuation)."""
        hp = self.hparams
        features, log_probs, entropies = self.imagine(start)
        rewards, continue_logits = self.world_model.heads(tf.reshape(features[1:], [-1, features.shape[-1]]))
        rewards = tf.reshape(rewards, tf.shape(log_probs))
        discounts = imagined_discounts(tf.reshape(continue_logits, tf.shape(log_probs)), hp.gamma,
                                       hp.imagined_continue)
        values = self.values(self.returns_critic, tf.reshape(features, [-1, features.shape[-1]]))
        values = tf.reshape(values, tf.shape(features)[:2])
        returns = lambda_returns(rewards, values, discounts, hp.return_lambda)
        return features, log_probs, entropies, values, returns, trajectory_weights(discounts)

    def critic_objective(self, features, returns, weights):
        """The critic's loss on imagined features [H + 1, B, F] against the lambda-returns [H, B],
        regularised toward the slow critic's values where `slow_critic_regularizer` asks; returns
        (loss, metrics)."""
        hp = self.hparams
        flat = tf.reshape(features[:-1], [-1, features.shape[-1]])
        slow_values = (tf.reshape(self.values(self.target_critic, flat), tf.shape(returns))
                       if hp.slow_critic_regularizer else None)
        outputs = self.critic(flat)
        if self.twohot_critic:
            logits = tf.reshape(outputs, tf.concat([tf.shape(returns), [NUM_BINS]], 0))
            return twohot_critic_loss(logits, returns, weights, slow_values, hp.slow_critic_regularizer)
        return critic_loss(tf.reshape(outputs, tf.shape(returns)), returns, weights, slow_values,
                           hp.slow_critic_regularizer)

    @tf.function(reduce_retracing=True, autograph=False)
    def update(self, batch):
        """One gradient step of the world model, the actor and the critic; returns their metrics.

        The actor-critic imagines with the world model as it was before this step's update, which
        is applied last (DreamerV3's order, whose one loss holds both; DreamerV2 updated the world
        model first): the world model's backward pass then runs beside imagination on a second
        core instead of before it (1.15x the gradient steps/s on 2 cores, docs/benchmarks.md)."""
        hp = self.hparams
        if not self.discrete:
            batch = dict(batch, actions=tf.cast(batch["actions"], tf.float32) / self.action_scale)
        with tf.GradientTape() as model_tape:
            loss, metrics, (hs, zs) = self.world_model.train_loss(batch)
        model_variables = self.world_model.trainable_variables
        model_gradients = model_tape.gradient(loss, model_variables)
        wm = self.world_model
        start = (tf.stop_gradient(tf.reshape(hs, [-1, hs.shape[-1]])),
                 tf.stop_gradient(tf.reshape(zs, [-1, wm.groups, wm.classes])))
        if hp.get("imagine_starts", 0):  # 0 (and runs saved before it existed): all of them
            chosen = imagination_starts(tf.shape(start[0])[0], hp.imagine_starts, self.seed.make_seeds(1)[:, 0])
            start = tuple(tf.gather(part, chosen) for part in start)
        with tf.GradientTape() as actor_tape:
            features, log_probs, entropies, values, returns, weights = self.imagined_returns(start)
            scale = 1.0
            if hp.return_normalization == "percentile":
                scale, low, high = return_scale(returns, self.return_low, self.return_high, RETURN_SCALE_RATE)
                self.return_low.assign(low)
                self.return_high.assign(high)
            rho = 1.0 if self.discrete else 0.0  # REINFORCE, or the returns' gradient through the dynamics
            actor, actor_metrics = actor_loss(log_probs, entropies, returns, values[:-1], weights, rho,
                                              hp.entropy_coef, scale)
            actor_metrics["return_scale"] = tf.convert_to_tensor(scale, tf.float32)
        self.actor_optimizer.apply_gradients(zip(actor_tape.gradient(actor, self.actor.trainable_variables),
                                                 self.actor.trainable_variables))
        with tf.GradientTape() as critic_tape:
            critic, critic_metrics = self.critic_objective(tf.stop_gradient(features), returns, weights)
        self.critic_optimizer.apply_gradients(zip(critic_tape.gradient(critic, self.critic.trainable_variables),
                                                  self.critic.trainable_variables))
        self.model_optimizer.apply_gradients(zip(model_gradients, model_variables))
        self.updates.assign_add(1)

        if hp.slow_critic_rate:  # the slow critic: an EMA of the critic (DreamerV3) ...
            for target, online in zip(self.target_critic.variables, self.critic.variables):
                target.assign((1.0 - hp.slow_critic_rate) * target + hp.slow_critic_rate * online)
        else:  # ... or a hard copy every target_update_period updates (DreamerV2)
            def copy_critic():
                for target, online in zip(self.target_critic.variables, self.critic.variables):
                    target.assign(online)
                return tf.constant(True)

            tf.cond(self.updates % hp.target_update_period == 0, copy_critic, lambda: tf.constant(False))
        return dict(metrics, model_loss=loss, **actor_metrics, **critic_metrics)

    def act(self, observation, temperature=1.0):
        """Actions [B] for the newest frames of `observation` [B, 1, H, W, C], each env's state
        carried on from its last call (see DreamerPolicy)."""
        return self.policy.act(tf.convert_to_tensor(observation), tf.constant(temperature, tf.float32))["action"].numpy()

    def checkpointables(self):
        """What a checkpoint holds; `model`, `optimizer` and `global_step` as an Estimator's
        checkpoint names them, so the world model loads on its own (player, evaluator)."""
        objects = dict(model=self.world_model, optimizer=self.model_optimizer, global_step=self.updates,
                       actor=self.actor, critic=self.critic, target_critic=self.target_critic,
                       actor_optimizer=self.actor_optimizer, critic_optimizer=self.critic_optimizer, seed=self.seed)
        if self.hparams.return_normalization == "percentile":  # (DreamerV2 runs' checkpoints stay as they were)
            objects.update(return_low=self.return_low, return_high=self.return_high)
        return objects


class DreamerPolicy(tf.Module):
    """Dreamer's acting policy, which acts from frames alone and carries its recurrent state: the
    world model's encoder and posterior fold each env's newest frame into that env's state, and
    the actor samples from the state's features. Exported as a SavedModel:

        policy = tf.saved_model.load(RUN + "/policy")
        policy.reset()                                  # before new episodes (all envs)
        action = policy.act(frames, temperature=1.0)["action"]   # frames [B, 1, H, W, C] uint8
        policy.end_episodes(done)                       # [B] bool: those envs start afresh

    A call with another batch size than the last starts every env afresh, as `reset` does.
    Observations are uint8 frames, or float32 vectors [B, 1, D] of a gymnasium env; continuous
    actions come scaled to the env's bounds (`action_scale`, the Box's high).
    """

    def __init__(self, world_model, actor, observation_shape, action_scale, seed, actor_unimix=0.0):
        super().__init__()
        self.world_model, self.actor, self.actor_unimix = world_model, actor, actor_unimix
        self.discrete = action_scale is None
        self.action_scale = action_scale
        self.rng = tf.random.Generator.from_seed(seed)
        groups, classes, num_actions = world_model.groups, world_model.classes, world_model.num_actions
        self.action_count = tf.Variable(num_actions, trainable=False, name="action_count")
        self.h = tf.Variable(tf.zeros([0, world_model.hparams.deter_size]), trainable=False,
                             shape=[None, world_model.hparams.deter_size])
        self.z = tf.Variable(tf.zeros([0, groups, classes]), trainable=False, shape=[None, groups, classes])
        # The last action as the world model takes it: an index, or a vector in [-1, 1].
        self.last_action = (tf.Variable(tf.zeros([0], tf.int32), trainable=False, shape=[None]) if self.discrete
                            else tf.Variable(tf.zeros([0, num_actions]), trainable=False, shape=[None, num_actions]))
        self.first = tf.Variable(tf.zeros([0], tf.bool), trainable=False, shape=[None])
        dtype = tf.float32 if world_model.vector else tf.uint8
        self.act = tf.function(self._act, input_signature=[
            tf.TensorSpec((None, 1) + tuple(observation_shape), dtype, name="observation"),
            tf.TensorSpec((), tf.float32, name="temperature")])
        self.reset = tf.function(self._reset, input_signature=[])
        self.end_episodes = tf.function(self._end_episodes, input_signature=[tf.TensorSpec([None], tf.bool)])

    def _start(self, batch):
        self.h.assign(tf.zeros([batch, self.h.shape[1]]))
        self.z.assign(tf.zeros([batch, self.z.shape[1], self.z.shape[2]]))
        self.last_action.assign(tf.zeros(tf.concat([[batch], tf.shape(self.last_action)[1:]], 0),
                                         self.last_action.dtype))
        self.first.assign(tf.ones([batch], tf.bool))

    def _act(self, observation, temperature):
        from rlkit.rl.learners.policy_export import sample_actions

        frames = observation[:, -1]
        batch = tf.shape(frames)[0]
        if tf.shape(self.h)[0] != batch:
            self._start(batch)
        h = self.world_model.advance((self.h, self.z), self.last_action)
        h = tf.where(self.first[:, None], tf.zeros_like(h), h)
        seeds = tf.cast(self.rng.make_seeds(2), tf.int32)
        (h, z), _ = self.world_model.observe_step(h, self.world_model.embed(frames), seeds[:, 0])
        features = self.world_model.features((h, z))
        if self.discrete:
            action = sample_actions(action_logits(self.actor, features, self.actor_unimix), True, temperature,
                                    seeds[:, 1])
            env_action = action
        else:
            action, _, _ = sample_continuous(self.actor(features), temperature, seeds[:, 1])
            env_action = action * self.action_scale
        self.h.assign(h)
        self.z.assign(z)
        self.last_action.assign(action)
        self.first.assign(tf.zeros([batch], tf.bool))
        return {"action": env_action}

    def _reset(self):
        self.first.assign(tf.ones_like(self.first))
        return tf.constant(True)

    def _end_episodes(self, done):
        if tf.shape(done)[0] == tf.shape(self.first)[0]:
            self.first.assign(self.first | done)
        return tf.constant(True)
