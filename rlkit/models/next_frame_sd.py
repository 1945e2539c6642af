"""SimPLe's stochastic world model with a discrete latent (`next_frame_basic_stochastic_discrete`).

The deterministic network of next_frame.py, plus `bottleneck_bits` latent bits added at its
bottleneck, which carry what the context cannot tell (where the ball will bounce):

    training:  an inference network sees the context and the target frame and emits the bits:
               tanh, Gaussian noise, straight-through sign, random bit flips.
    prior:     an LSTM predicts the bits from the context, 8 at a time (a 256-way softmax per
               group), teacher-forced on the posterior bits; at inference time it is sampled
               with a temperature and its bits drive the prediction.
    schedules: the fraction of training examples driven by the prior's bits instead of the
               posterior's, and the fraction of later target frames predicted from the model's
               own earlier predictions (scheduled sampling), both rise linearly over training.
    losses:    pixel cross-entropy with a cutoff, reward cross-entropy, and the prior's bit loss.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from rlkit.models.next_frame import NextFrameBasicDeterministic, pixel_and_reward_losses, stack_frames
from rlkit.models.registry import register_model
from rlkit.models.world_model import LOSS_KEYS, append_frame, most_likely, predict_after_context

BITS_PER_GROUP = 8  # the prior predicts the bits a byte at a time


def conv_tower(hidden_size, num_steps, name):
    """Stride-2 convs down to a global mean: a frame stack -> a feature vector."""
    return keras.Sequential(
        [layers.Conv2D(hidden_size, 4, strides=2, padding="same", activation="relu") for _ in range(num_steps)]
        + [layers.GlobalAveragePooling2D()], name=name)


def bits_to_groups(bits):
    """[B, n] bits in {-1, 1} -> [B, n/8] integers 0..255 (the prior's classes)."""
    binary = tf.cast(bits > 0, tf.int32)
    groups = tf.reshape(binary, (tf.shape(bits)[0], -1, BITS_PER_GROUP))
    return tf.reduce_sum(groups * (2 ** tf.range(BITS_PER_GROUP)), axis=-1)


def groups_to_bits(groups):
    """Inverse of bits_to_groups: [B, n/8] integers -> [B, n] floats in {-1, 1}."""
    binary = tf.bitwise.bitwise_and(groups[..., None], 2 ** tf.range(BITS_PER_GROUP)) > 0
    return tf.reshape(tf.where(binary, 1.0, -1.0), (tf.shape(groups)[0], -1))


def linear_schedule(step, steps_to_max, maximum):
    """0 at step 0, rising linearly to `maximum` at `steps_to_max`, then flat."""
    progress = tf.minimum(tf.cast(step, tf.float32) / float(max(steps_to_max, 1)), 1.0)
    return maximum * progress


class NextFrameStochasticDiscrete(keras.Model):
    def __init__(self, hparams, frame_shape, num_actions, seed, **kwargs):
        super().__init__(**kwargs)
        self.hparams = hparams
        self.frame_shape = tuple(frame_shape)
        self.num_actions = num_actions
        self.frame_model = NextFrameBasicDeterministic(hparams, frame_shape, num_actions,
                                                       latent_bits=hparams.bottleneck_bits)
        bits = hparams.bottleneck_bits
        self.num_groups = bits // BITS_PER_GROUP
        self.posterior_tower = conv_tower(hparams.latent_hidden_size, hparams.latent_compress_steps, "posterior")
        self.posterior_bits = layers.Dense(bits)
        self.prior_tower = conv_tower(hparams.latent_hidden_size, hparams.latent_compress_steps, "prior")
        self.prior_start = layers.Dense(hparams.latent_hidden_size)
        self.prior_group_embedding = layers.Embedding(2 ** BITS_PER_GROUP + 1, hparams.latent_hidden_size)
        self.prior_cell = layers.LSTMCell(hparams.latent_hidden_size)
        self.prior_logits = layers.Dense(2 ** BITS_PER_GROUP)
        self.rng = tf.random.Generator.from_seed(seed)

    def posterior(self, context_frames, target_frame, training):
        """The inference network's bits for one target frame, [B, bits] in {-1, 1}."""
        frames = tf.concat([context_frames, target_frame[:, None]], axis=1)
        x = tf.tanh(self.posterior_bits(self.posterior_tower(stack_frames(frames, self.compute_dtype))))
        if training:
            x = x + self.hparams.bottleneck_noise * self.rng.normal(tf.shape(x))
        bits = x + tf.stop_gradient(tf.sign(x) - x)  # sign forward, identity gradient backward
        if training:
            flip = self.rng.uniform(tf.shape(bits)) < self.hparams.bit_flip_probability
            bits = tf.where(flip, -bits, bits)
        return bits

    def _prior_step(self, previous_groups, state):
        output, state = self.prior_cell(self.prior_group_embedding(previous_groups), state)
        return self.prior_logits(output), state

    def _prior_initial_state(self, context_frames):
        start = self.prior_start(self.prior_tower(stack_frames(context_frames, self.compute_dtype)))
        return [tf.tanh(start), tf.zeros_like(start)]

    def prior_loss(self, context_frames, target_bits):
        """Teacher-forced cross-entropy of the LSTM prior on the posterior's bit groups."""
        targets = bits_to_groups(tf.stop_gradient(target_bits))
        state = self._prior_initial_state(context_frames)
        previous = tf.fill([tf.shape(targets)[0]], 2 ** BITS_PER_GROUP)  # the start token
        losses = []
        for group in range(self.num_groups):
            logits, state = self._prior_step(previous, state)
            losses.append(tf.nn.sparse_softmax_cross_entropy_with_logits(targets[:, group], logits))
            previous = targets[:, group]
        return tf.reduce_mean(tf.stack(losses))

    def sample_prior(self, context_frames, temperature):
        """Bits sampled from the prior a group at a time; temperature 0 takes the likeliest group."""
        state = self._prior_initial_state(context_frames)
        previous = tf.fill([tf.shape(context_frames)[0]], 2 ** BITS_PER_GROUP)
        groups = []
        for _ in range(self.num_groups):
            logits, state = self._prior_step(previous, state)
            seed = tf.cast(self.rng.make_seeds(1)[:, 0], tf.int32)
            sampled = tf.random.stateless_categorical(logits / tf.maximum(temperature, 1e-6), 1, seed,
                                                      dtype=tf.int32)[:, 0]
            previous = tf.where(temperature > 0, sampled, tf.argmax(logits, axis=-1, output_type=tf.int32))
            groups.append(previous)
        return groups_to_bits(tf.stack(groups, axis=1))

    def loss_and_metrics(self, features, step, training=False):
        """Losses over the window's target frames; the schedules are at training step `step`."""
        hparams = self.hparams
        frames, actions, rewards = features["frames"], features["actions"], features["rewards"]
        context, batch = hparams.num_context_frames, tf.shape(frames)[0]
        prior_mix = linear_schedule(step, hparams.latent_prior_schedule_steps, hparams.latent_prior_max_mix)
        sampling = linear_schedule(step, hparams.scheduled_sampling_steps, hparams.scheduled_sampling_max)
        history, state = frames[:, :context], None
        per_frame, bit_losses = [], []
        for i in range(hparams.num_target_frames):
            target = context + i
            bits = self.posterior(history, frames[:, target], training)
            bit_losses.append(self.prior_loss(history, bits))
            if training:
                use_prior = self.rng.uniform([batch, 1]) < prior_mix
                bits = tf.where(use_prior, tf.stop_gradient(self.sample_prior(history, 1.0)), bits)
            pixel_logits, reward_logits, state = self.frame_model(history, actions[:, target - 1], state,
                                                                  latent=bits, training=training)
            per_frame.append(pixel_and_reward_losses(pixel_logits, reward_logits, frames[:, target],
                                                     rewards[:, target - 1], hparams.pixel_loss_cutoff))
            # Scheduled sampling: the next context holds the model's own frame for some examples.
            predicted = tf.cast(tf.argmax(pixel_logits, axis=-1), tf.uint8)
            own = self.rng.uniform([batch, 1, 1, 1]) < sampling if training else tf.zeros([batch, 1, 1, 1], bool)
            next_frame = tf.where(own, predicted, frames[:, target])
            history = append_frame(history, next_frame)
        metrics = {name: tf.add_n([m[name] for m in per_frame]) / len(per_frame) for name in per_frame[0]}
        metrics["bit_loss"] = tf.add_n(bit_losses) / len(bit_losses)
        metrics["prior_mix"] = prior_mix
        metrics["scheduled_sampling"] = sampling
        loss = (metrics["pixel_loss"] + hparams.reward_loss_coef * metrics["reward_loss"]
                + hparams.bit_loss_coef * metrics["bit_loss"])
        assert set(metrics) == LOSS_KEYS | {"bit_loss", "prior_mix", "scheduled_sampling"}, set(metrics)
        return loss, metrics

    def initial_state(self, batch_size):
        return self.frame_model.initial_state(batch_size)

    @tf.function(reduce_retracing=True)
    def next_frame(self, history, actions, state, temperature=1.0):
        """The simulated env's step with bits sampled from the prior at `temperature`: history
        [B, k, H, W, C] uint8, actions [B], the recurrent state -> next frames [B, H, W, C]
        uint8, rewards [B] in {-1, 0, 1}, the next state."""
        bits = self.sample_prior(history, tf.cast(temperature, tf.float32))
        pixel_logits, reward_logits, state = self.frame_model(history, actions, state, latent=bits,
                                                              training=False)
        return most_likely(pixel_logits, reward_logits) + (state,)

    def infer(self, features):
        return predict_after_context(self, features)


@register_model
def next_frame_basic_stochastic_discrete(hparams, frame_shape, num_actions):
    # The sampling seed comes from numpy, which keras.utils.set_random_seed seeds with the run's seed.
    return NextFrameStochasticDiscrete(hparams, frame_shape, num_actions, seed=int(np.random.randint(2**31 - 1)))
