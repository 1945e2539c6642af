"""SimPLe's stochastic world model with a discrete latent (`next_frame_basic_stochastic_discrete`).

The deterministic network of next_frame.py, plus `bottleneck_bits` latent bits injected at its
bottleneck (x * sigmoid(Dense(bits)) + Dense(bits)), which carry what the context cannot tell
(where the ball will bounce). As tensor2tensor's NextFrameBasicStochasticDiscrete:

    posterior: (training) the standardised context and target frames -> Dense(hidden_size) +
               timing signal, action injected -> two 8x8 stride-4 convs, each reduced by a mean
               with attention -> Dense(bits) logits. The prior's target is their clean sign;
               the bits the model uses get Gaussian noise before tanh, a straight-through sign
               and random flips, and start continuous, turning discrete over
               `discretize_warmup_steps`.
    prior:     an LSTM started from the flattened bottleneck (so it sees the context and the
               action) predicts the bits 8 at a time (a 256-way softmax per group),
               teacher-forced with dropout; at inference time it is sampled at a temperature
               and its bits drive the prediction.
    schedules: over `latent_rnn_warmup_steps`, the share of bits taken from the prior's samples
               instead of the posterior rises to `latent_rnn_max_sampling` (per bit); over half
               of it, the share of examples that use the latent at all rises to
               `latent_use_max_probability` (the rest learn from the action alone); over
               `scheduled_sampling_steps`, the share of examples whose later context holds the
               model's own predictions rises to `scheduled_sampling_max_prob`.
    losses:    pixel cross-entropy with a cutoff, reward cross-entropy, the prior's bit loss.

Outside training (evaluation, the simulated env) the bits come from the prior and every
target after the first is predicted from the model's own earlier predictions.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from rlkit.models.next_frame import ActionInjection, NextFrameBasicDeterministic, add_timing_signal, stack_frames
from rlkit.models.next_frame_losses import (end_labels, end_probabilities, episode_end_losses, likeliest_ends,
                                            pixel_and_reward_losses, target_weights, weighted_mean)
from rlkit.models.registry import register_model
from rlkit.models.world_model import (FRAME_DECODINGS, LOSS_KEYS, append_frame, expected_rewards, most_likely,
                                      predict_after_context)

BITS_PER_GROUP = 8  # the prior predicts the bits a byte at a time
MIN_SHARE = 0.01    # tensor2tensor's schedules start at 1%, not 0


def bits_to_groups(bits):
    """[B, n] bits in {-1, 1} -> [B, n/8] integers 0..255 (the prior's classes)."""
    binary = tf.cast(bits > 0, tf.int32)
    groups = tf.reshape(binary, (tf.shape(bits)[0], -1, BITS_PER_GROUP))
    return tf.reduce_sum(groups * (2 ** tf.range(BITS_PER_GROUP)), axis=-1)


def groups_to_bits(groups):
    """Inverse of bits_to_groups: [B, n/8] integers -> [B, n] floats in {-1, 1}."""
    binary = tf.bitwise.bitwise_and(groups[..., None], 2 ** tf.range(BITS_PER_GROUP)) > 0
    return tf.reshape(tf.where(binary, 1.0, -1.0), (tf.shape(groups)[0], -1))


def linear_rise(step, steps_to_max):
    """1% at step 0, rising linearly to 1 at `steps_to_max`, then flat (inverse_lin_decay)."""
    progress = tf.minimum(tf.cast(step, tf.float32) / float(max(steps_to_max, 1)), 1.0)
    return MIN_SHARE + (1.0 - MIN_SHARE) * progress


def exponential_rise(step, steps_to_max):
    """1% at step 0, rising exponentially to 1 at `steps_to_max` (inverse_exp_decay)."""
    remaining = tf.maximum(float(steps_to_max) - tf.cast(step, tf.float32), 0.0)
    return MIN_SHARE ** (remaining / float(max(steps_to_max, 1)))


def scheduled_sampling_probability(step, steps, maximum):
    """The share of examples fed their own predictions: very low for the first quarter of
    `steps` (exponential), then nearly linear up to `maximum` at `steps`."""
    return maximum * exponential_rise(step, steps // 4) * linear_rise(step, steps)


class MeanWithAttention(layers.Layer):
    """[B, H, W, C] -> [B, 2C]: the spatial mean and 4 attention-weighted means, mixed by a Dense."""

    def __init__(self, channels, num_heads=4, **kwargs):
        super().__init__(**kwargs)
        self.attention = layers.Dense(num_heads)
        self.mix = layers.Dense(2 * channels)

    def call(self, x):
        batch, channels = tf.shape(x)[0], x.shape[-1]
        weights = tf.nn.softmax(tf.reshape(self.attention(x), (batch, -1, 1, self.attention.units)), axis=1)
        attended = tf.reduce_sum(tf.reshape(x, (batch, -1, channels, 1)) * weights, axis=1)
        attended /= tf.cast(tf.shape(weights)[1], x.dtype)  # a mean over positions, as the original
        mean = tf.reduce_mean(x, axis=[1, 2])[:, :, None]
        return self.mix(tf.reshape(tf.concat([attended, mean], axis=-1), (batch, -1)))


class NextFrameStochasticDiscrete(keras.Model):
    def __init__(self, hparams, frame_shape, num_actions, pixel_values, seed, **kwargs):
        super().__init__(**kwargs)
        self.hparams = hparams
        self.frame_shape = tuple(frame_shape)
        self.num_actions = num_actions
        self.frame_model = NextFrameBasicDeterministic(hparams, frame_shape, num_actions, pixel_values, seed=seed)
        bits, filters = hparams.bottleneck_bits, hparams.latent_discriminator_filters
        self.num_groups = bits // BITS_PER_GROUP
        # Posterior (inference network).
        self.posterior_embed = layers.Dense(hparams.hidden_size,
                                            bias_initializer=keras.initializers.RandomNormal(stddev=0.01))
        self.posterior_action = ActionInjection(hparams.hidden_size)
        self.posterior_convs = [layers.Conv2D(filters, 8, strides=4, padding="same"),
                                layers.Conv2D(4 * filters, 8, strides=4, padding="same")]
        self.posterior_means = [MeanWithAttention(filters), MeanWithAttention(4 * filters)]
        self.posterior_bits = layers.Dense(bits)
        # Prior: an LSTM over bit groups, started from the bottleneck.
        size = hparams.latent_predictor_state_size
        self.prior_input, self.prior_c, self.prior_h = (layers.Dense(size) for _ in range(3))
        self.prior_group_embedding = layers.Embedding(2 ** BITS_PER_GROUP, size)
        self.prior_cell = layers.LSTMCell(size)
        self.prior_logits = layers.Dense(2 ** BITS_PER_GROUP)
        self.prior_dropout = layers.Dropout(hparams.latent_predictor_dropout)
        # Bits into the bottleneck: a gate and a shift per channel.
        channels = self.frame_model.bottleneck_channels
        self.bits_gate, self.bits_shift = layers.Dense(channels), layers.Dense(channels)
        self.rng = tf.random.Generator.from_seed(seed)

    def add_bits(self, bottleneck, bits):
        bits = tf.cast(bits, bottleneck.dtype)
        return (bottleneck * tf.sigmoid(self.bits_gate(bits)[:, None, None, :])
                + self.bits_shift(bits)[:, None, None, :])

    def posterior_logits(self, context_frames, target_frame, actions):
        """The inference network's bit logits [B, bits] (before noise) for one target frame."""
        frames = tf.concat([context_frames, target_frame[:, None]], axis=1)
        x = add_timing_signal(self.posterior_embed(stack_frames(frames, self.compute_dtype)))
        x = self.posterior_action(x, tf.one_hot(actions, self.num_actions, dtype=x.dtype))
        first = self.posterior_convs[0](x)
        second = self.posterior_convs[1](tf.nn.relu(first))
        features = tf.concat([self.posterior_means[0](first), self.posterior_means[1](second)], axis=-1)
        return tf.cast(self.posterior_bits(features), tf.float32)

    def posterior_bits_for_training(self, logits, step):
        """Noisy discrete bits for the frame model: Gaussian noise, tanh, straight-through sign,
        random flips; continuous (tanh) for a share of bits that falls to 0 over
        discretize_warmup_steps."""
        hparams = self.hparams
        continuous = tf.tanh(logits + self.rng.truncated_normal(tf.shape(logits), stddev=hparams.bottleneck_noise))
        bits = continuous + tf.stop_gradient(tf.sign(continuous) - continuous)  # sign forward, identity back
        flip = self.rng.uniform(tf.shape(bits)) < hparams.bit_flip_probability
        bits = tf.where(flip, -bits, bits)
        discrete = self.rng.uniform(tf.shape(bits)) < linear_rise(step, hparams.discretize_warmup_steps)
        return tf.where(discrete, bits, continuous)

    def _prior_start(self, bottleneck):
        flat = tf.reshape(tf.cast(bottleneck, tf.float32), (tf.shape(bottleneck)[0], -1))
        return self.prior_input(flat), [self.prior_h(flat), self.prior_c(flat)]

    def prior_loss(self, bottleneck, target_bits, training, weights=None):
        """Teacher-forced cross-entropy of the LSTM prior on `target_bits` (the posterior's clean
        bits), each example weighted by weights [B] (None: all count; 0 for a target frame past
        its episode's end)."""
        targets = bits_to_groups(tf.stop_gradient(target_bits))
        lstm_input, state = self._prior_start(bottleneck)
        embedded = self.prior_dropout(self.prior_group_embedding(targets), training=training)
        losses = []
        for group in range(self.num_groups):
            output, state = self.prior_cell(lstm_input, state)
            logits = tf.cast(self.prior_logits(self.prior_dropout(output, training=training)), tf.float32)
            losses.append(tf.nn.sparse_softmax_cross_entropy_with_logits(targets[:, group], logits))
            lstm_input = embedded[:, group]
        return weighted_mean(tf.stack(losses, axis=1), weights)

    def sample_prior(self, bottleneck, temperature):
        """Bits [B, bits] sampled from the prior a group at a time; temperature 0 takes the likeliest."""
        lstm_input, state = self._prior_start(bottleneck)
        groups = []
        for _ in range(self.num_groups):
            output, state = self.prior_cell(lstm_input, state)
            logits = tf.cast(self.prior_logits(output), tf.float32)  # sampled in float32 under mixed precision
            seed = tf.cast(self.rng.make_seeds(1)[:, 0], tf.int32)
            sampled = tf.random.stateless_categorical(logits / tf.maximum(temperature, 1e-6), 1, seed,
                                                      dtype=tf.int32)[:, 0]
            group = tf.where(temperature > 0, sampled, tf.argmax(logits, axis=-1, output_type=tf.int32))
            groups.append(group)
            lstm_input = self.prior_group_embedding(group)
        return groups_to_bits(tf.stack(groups, axis=1))

    def _training_latent(self, history, target_frame, actions, step, bit_losses, weights=None):
        """inject_latent for a training step: posterior bits, partly replaced by the prior's
        samples, for the share of examples that use the latent; the prior's loss (its examples
        weighted by `weights`, as `prior_loss`) goes to bit_losses."""
        hparams = self.hparams
        logits = self.posterior_logits(history, target_frame, actions)
        clean = tf.stop_gradient(tf.sign(logits))

        def inject(bottleneck):
            bit_losses.append(self.prior_loss(bottleneck, clean, training=True, weights=weights))
            bits = self.posterior_bits_for_training(logits, step)
            # Per bit, the prior's sample on the forward pass (no gradient through it).
            from_prior = self.rng.uniform(tf.shape(bits)) < (
                hparams.latent_rnn_max_sampling * linear_rise(step, hparams.latent_rnn_warmup_steps))
            bits = tf.where(from_prior, tf.stop_gradient(self.sample_prior(bottleneck, 1.0)), bits)
            # Early on most examples skip the latent, so the action has to explain the frame.
            use_latent = self.rng.uniform([tf.shape(bits)[0], 1, 1, 1]) < (
                hparams.latent_use_max_probability * linear_rise(step, hparams.latent_rnn_warmup_steps // 2))
            return tf.where(use_latent, self.add_bits(bottleneck, bits), bottleneck)
        return inject

    def _prior_latent(self, history, target_frame, actions, temperature, bit_losses, weights=None):
        """inject_latent outside training: the prior's bits; its loss on the posterior's clean
        bits (when the target is known) goes to bit_losses as a metric."""
        def inject(bottleneck):
            if target_frame is not None:
                clean = tf.sign(self.posterior_logits(history, target_frame, actions))
                bit_losses.append(self.prior_loss(bottleneck, clean, training=False, weights=weights))
            return self.add_bits(bottleneck, self.sample_prior(bottleneck, temperature))
        return inject

    def loss_and_metrics(self, features, step, training=False):
        """Losses over the window's target frames; the schedules are at training step `step`.
        Outside training the bits come from the prior and targets after the first are
        predicted from the model's own frames (SimPLe's evaluation)."""
        hparams = self.hparams
        frames, actions, rewards = features["frames"], features["actions"], features["rewards"]
        context, batch = hparams.num_context_frames, tf.shape(frames)[0]
        sampling = scheduled_sampling_probability(step, hparams.scheduled_sampling_steps,
                                                  hparams.scheduled_sampling_max_prob)
        per_frame, bit_losses = [], []

        def latent_for(history, target_frame, action, weights=None):
            if training:
                return self._training_latent(history, target_frame, action, step, bit_losses, weights)
            return self._prior_latent(history, target_frame, action, 1.0, bit_losses, weights)
        history = frames[:, :context]
        state, warm_up_loss = self.frame_model.warm_up(history, actions, latent_for, training=training)
        for i in range(hparams.num_target_frames):
            target = context + i
            action = actions[:, target - 1]
            frame_weights, step_weights = target_weights(features, target, hparams.end_target)
            inject = latent_for(history, frames[:, target], action, frame_weights)
            pixel_logits, reward_logits, end_logits, state = self.frame_model(history, action, state,
                                                                              inject_latent=inject, training=training)
            per_frame.append(pixel_and_reward_losses(pixel_logits, reward_logits, frames[:, target],
                                                     rewards[:, target - 1], hparams.pixel_loss_cutoff,
                                                     frames[:, target - 1], hparams.changed_pixel_weight,
                                                     frame_weights, step_weights))
            if self.frame_model.predicts_ends:
                per_frame[-1].update(episode_end_losses(end_logits, end_labels(features, target, hparams.end_target),
                                                        step_weights))
            # Scheduled sampling: the next context holds the model's own frame for some examples.
            predicted = FRAME_DECODINGS[hparams.frame_decoding](pixel_logits)
            own = self.rng.uniform([batch, 1, 1, 1]) < sampling if training else tf.ones([batch, 1, 1, 1], bool)
            history = append_frame(history, tf.where(own, predicted, frames[:, target]))
        metrics = {name: tf.add_n([m[name] for m in per_frame]) / len(per_frame) for name in per_frame[0]}
        metrics["bit_loss"] = tf.add_n(bit_losses) / len(bit_losses)
        metrics["prior_share"] = hparams.latent_rnn_max_sampling * linear_rise(step, hparams.latent_rnn_warmup_steps)
        metrics["scheduled_sampling"] = sampling
        loss = (metrics["pixel_loss"] + hparams.reward_loss_coef * metrics["reward_loss"]
                + hparams.bit_loss_coef * metrics["bit_loss"])
        if self.frame_model.predicts_ends:
            loss += hparams.end_loss_coef * metrics["end_loss"]
        assert set(metrics) == (LOSS_KEYS | {"bit_loss", "prior_share", "scheduled_sampling"}
                                | self.frame_model.end_keys), set(metrics)
        if hparams.single_frame:  # the original's extra loss on the frames predicted while warming up
            metrics["warm_up_pixel_loss"] = warm_up_loss
            loss += warm_up_loss
        return loss, metrics

    def initial_state(self, batch_size):
        return self.frame_model.initial_state(batch_size)

    @tf.function(reduce_retracing=True, autograph=False)
    def start_state(self, history, history_actions, temperature=1.0):
        """The recurrent state for the step after history [B, k, H, W, C] uint8; history_actions
        [B, k-1]: the actions taken on its frames. Warm-up bits come from the prior at `temperature`."""
        temperature = tf.cast(temperature, tf.float32)

        def latent_for(window, target_frame, action):
            return self._prior_latent(window, None, action, temperature, [])
        return self.frame_model.warm_up(history, history_actions, latent_for)[0]

    @property
    def predicts_ends(self):
        return self.frame_model.predicts_ends

    @tf.function(reduce_retracing=True, autograph=False)
    def next_frame(self, history, actions, state, temperature=1.0):
        """The simulated env's step with bits sampled from the prior at `temperature`: history
        [B, k, H, W, C] uint8, actions [B], the recurrent state -> next frames [B, H, W, C]
        uint8, rewards [B] in {-1, 0, 1}, the next state."""
        frames, rewards, _, state = self.next_frame_and_end(history, actions, state, temperature)
        return frames, rewards, state

    @tf.function(reduce_retracing=True, autograph=False)
    def next_frame_and_end(self, history, actions, state, temperature=1.0, expected_reward=False):
        """`next_frame`, and also ends [B] bool: whether each predicted frame is its episode's
        last (always False for a model without predict_episode_ends). With expected_reward
        (a Python bool), rewards are the head's mean (`expected_rewards`), not its likeliest."""
        inject = self._prior_latent(history, None, actions, tf.cast(temperature, tf.float32), [])
        pixel_logits, reward_logits, end_logits, state = self.frame_model(history, actions, state,
                                                                          inject_latent=inject, training=False)
        frames, rewards = most_likely(pixel_logits, reward_logits, self.hparams.frame_decoding)
        if expected_reward:
            rewards = expected_rewards(reward_logits)
        return frames, rewards, likeliest_ends(end_logits, tf.shape(actions)[0]), state

    @tf.function(reduce_retracing=True, autograph=False)
    def reward_probabilities(self, history, actions, state, temperature=1.0):
        """The reward head's distribution [B, 3] over rewards -1, 0, 1 for the step `next_frame`
        takes, with bits from the prior at `temperature` (0: the likeliest, as next_frame's)."""
        inject = self._prior_latent(history, None, actions, tf.cast(temperature, tf.float32), [])
        _, reward_logits, _, _ = self.frame_model(history, actions, state, inject_latent=inject, training=False)
        return tf.nn.softmax(reward_logits)

    @tf.function(reduce_retracing=True, autograph=False)
    def end_probabilities(self, history, actions, state, temperature=1.0):
        """[B] the end head's probability that the frame `next_frame` predicts is its episode's
        last, with bits from the prior at `temperature` (`next_frame_and_end` ends above 0.5)."""
        inject = self._prior_latent(history, None, actions, tf.cast(temperature, tf.float32), [])
        _, _, end_logits, _ = self.frame_model(history, actions, state, inject_latent=inject, training=False)
        return end_probabilities(end_logits, tf.shape(actions)[0])

    def infer(self, features):
        return predict_after_context(self, features)


@register_model
def next_frame_basic_stochastic_discrete(hparams, frame_shape, num_actions, pixel_values=256):
    # The sampling seed comes from numpy, which keras.utils.set_random_seed seeds with the run's seed.
    return NextFrameStochasticDiscrete(hparams, frame_shape, num_actions, pixel_values,
                                       seed=int(np.random.randint(2**31 - 1)))
