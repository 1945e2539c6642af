"""SimPLe's deterministic video-prediction world model (`next_frame_basic_deterministic`).

From the last `num_context_frames` frames and the action taken on the last of them, predict
the next frame as a softmax per pixel and channel over its values (256 on Atari, 2 on MinAtar), and the reward as 3 classes
(-1, 0, +1). Architecture, as in tensor2tensor's NextFrameBasicDeterministic:

    inputs:  each context frame standardised (per image and channel), stacked along channels;
             in training, `input_noise` of the pixels replaced by the batch's median colour
    embed:   pointwise Dense(hidden_size), plus a sinusoidal timing signal over rows and columns
    memory:  a conv-GRU state at full resolution (`recurrent_state_size` channels), added to
             the embedding (rlkit's stacked design, see the README)
    single_frame (the original stochastic model's recurrent design): only the last context
             frame goes in, stacked with the state; the conv-GRU then takes in that frame. The
             state starts by warming up over the context frames one at a time (`warm_up`),
             and training adds the pixel loss of the warm-up predictions
    encoder: num_compress_steps x [dropout, timing signal, 4x4 stride-2 conv, layer norm];
             filters double for the first filter_double_steps steps
    middle:  action injected (x * sigmoid(Dense(a)) + Dense(a)), the stochastic model's latent
             injected, then num_hidden_layers 3x3 convs after dropout `residual_dropout` (the
             first replaces x, later ones are residual with layer norm)
    decoder: per step, dropout, action injected, 4x4 stride-2 transposed conv, cropped, added
             to the encoder's input at that resolution (U-Net skip), layer norm, timing signal
    output:  pointwise Dense(channels x values) -> per-pixel, per-channel logits
    reward:  Dense(128, relu) over [mean of the middle's input, mean of the decoder's output],
             then Dense(3) (not in SimPLe: with head_pooling="mean_and_max", the maxima too);
             the optional end head alike, Dense(2)

Features are windows from `FrameStore.window_dataset`: frames [B, L, H, W, C] uint8, actions
[B, L], rewards [B, L] in -1..1; frame i+1 follows action i, which earned reward i. With
predict_episode_ends also ends [B, L] (step i ended its episode), and with
end_target=ending_step stored [B, L] (0 where the window has run past its episode's end).

Every world model has the interface of `rlkit.models.world_model`: built from its hparams, the
env's frame shape and its number of actions; `start_state`, `next_frame` and
`loss_and_metrics(features, step, training)`.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from rlkit.hparams.checks import check_frame_decoding
from rlkit.models.next_frame_losses import (end_labels, end_probabilities, episode_end_losses, likeliest_ends,
                                            pixel_and_reward_losses, target_weights)
from rlkit.models.registry import register_model
from rlkit.models.world_model import (LOSS_KEYS, expected_rewards, most_likely, pixel_classes,
                                      predict_after_context)

NUM_REWARD_CLASSES = 3  # rewards -1, 0, +1, shifted to classes 0, 1, 2


class ActionInjection(layers.Layer):
    """x * sigmoid(Dense(a)) + Dense(a): the action gates and shifts every position's features."""

    def __init__(self, channels, **kwargs):
        super().__init__(**kwargs)
        self.gate = layers.Dense(channels)
        self.shift = layers.Dense(channels)

    def call(self, x, action_one_hot):
        gate = self.gate(action_one_hot)[:, None, None, :]
        shift = self.shift(action_one_hot)[:, None, None, :]
        return x * keras.ops.sigmoid(gate) + shift


class ConvGRU(layers.Layer):
    """A convolutional GRU cell: the state keeps its resolution and is updated from the input."""

    def __init__(self, channels, **kwargs):
        super().__init__(**kwargs)
        self.gates = layers.Conv2D(2 * channels, 3, padding="same", activation="sigmoid")
        self.candidate = layers.Conv2D(channels, 3, padding="same", activation="tanh")

    def call(self, x, state):
        state = tf.cast(state, x.dtype)
        update, reset = tf.split(self.gates(tf.concat([x, state], axis=-1)), 2, axis=-1)
        candidate = self.candidate(tf.concat([x, reset * state], axis=-1))
        return tf.cast((1.0 - update) * state + update * candidate, tf.float32)


def add_timing_signal(x):
    """x [B, H, W, C] plus sinusoids of the row (first C/2 channels) and column (next C/2)
    position at geometric timescales, so convolutions can tell where they are."""
    channels = x.shape[-1]
    num_timescales = channels // 4
    if num_timescales == 0:
        return x
    log_increment = np.log(1e4) / max(num_timescales - 1, 1)
    inverse_timescales = np.exp(np.arange(num_timescales) * -log_increment)
    signals = []
    for axis in (1, 2):
        position = tf.cast(tf.range(tf.shape(x)[axis]), tf.float32)[:, None] * inverse_timescales[None].astype(np.float32)
        signals.append(tf.concat([tf.sin(position), tf.cos(position)], axis=1))  # [L, 2 x timescales]
    rows, columns = signals
    padding = channels - 4 * num_timescales
    rows = tf.pad(rows, [[0, 0], [0, 2 * num_timescales + padding]])[:, None, :]
    columns = tf.pad(columns, [[0, 0], [2 * num_timescales, padding]])[None, :, :]
    return x + tf.cast(rows + columns, x.dtype)[None]


def standardize(frames):
    """Each image of [..., H, W, C] to zero mean and unit variance per channel (the variance
    floored for flat images), as tensor2tensor's standardize_images."""
    mean, variance = tf.nn.moments(frames, axes=[-3, -2], keepdims=True)
    num_pixels = tf.cast(tf.shape(frames)[-3] * tf.shape(frames)[-2], frames.dtype)
    return (frames - mean) / tf.maximum(tf.sqrt(variance), tf.math.rsqrt(num_pixels))


def stack_frames(frames, dtype):
    """[B, k, H, W, C] uint8 -> [B, H, W, k*C]: each frame standardised, stacked along channels."""
    frames = standardize(tf.cast(frames, tf.float32))
    shape = tf.shape(frames)
    stacked = tf.transpose(frames, (0, 2, 3, 1, 4))
    return tf.cast(tf.reshape(stacked, (shape[0], shape[2], shape[3], frames.shape[1] * frames.shape[4])), dtype)


def pixel_noise(frames, probability, seed_generator):
    """Training-time input noise: each pixel of [B, k, H, W, C] frames becomes, with
    `probability`, the batch's median colour (its background), as SimPLe's deterministic model."""
    flat = tf.reshape(frames, (-1, frames.shape[-1]))
    median = tf.sort(flat, axis=0)[tf.shape(flat)[0] // 2]
    replace = seed_generator.uniform(tf.concat([tf.shape(frames)[:-1], [1]], axis=0)) < probability
    return tf.where(replace, tf.cast(median, frames.dtype), frames)


class NextFrameBasicDeterministic(keras.Model):
    """The deterministic next-frame and reward predictor."""

    def __init__(self, hparams, frame_shape, num_actions, pixel_values=256, seed=0, **kwargs):
        super().__init__(**kwargs)
        self.hparams = hparams
        self.frame_shape = tuple(frame_shape)  # (H, W, C) of the env's frames
        self.num_actions = num_actions
        self.pixel_values = pixel_values  # classes per channel value: 256 on Atari, 2 on MinAtar
        check_frame_decoding(hparams, pixel_values)
        # Non-zero biases keep uniform (all-background) inputs from embedding to zero.
        self.embed = layers.Dense(hparams.hidden_size, bias_initializer=keras.initializers.RandomNormal(stddev=0.01))
        self.encoder, channels = [], [hparams.hidden_size]
        filters = hparams.hidden_size
        for step in range(hparams.num_compress_steps):
            if step < hparams.filter_double_steps:
                filters *= 2
            self.encoder.append((layers.Dropout(hparams.dropout),
                                 layers.Conv2D(filters, 4, strides=2, padding="same", activation="relu"),
                                 layers.LayerNormalization()))
            channels.append(filters)
        self.bottleneck_channels = filters
        self.bottleneck_action = ActionInjection(filters)
        self.middle = [(layers.Dropout(hparams.residual_dropout),
                        layers.Conv2D(filters, 3, padding="same", activation="relu"),
                        layers.LayerNormalization() if i else None) for i in range(hparams.num_hidden_layers)]
        self.reward_hidden = layers.Dense(128, activation="relu")
        self.reward_head = layers.Dense(NUM_REWARD_CLASSES)
        self.predicts_ends = hparams.predict_episode_ends
        if self.predicts_ends:  # is the predicted frame its episode's last?
            self.end_hidden = layers.Dense(128, activation="relu")
            self.end_head = layers.Dense(2)
        self.decoder = []
        for step in reversed(range(hparams.num_compress_steps)):
            self.decoder.append((layers.Dropout(hparams.dropout), ActionInjection(channels[step + 1]),
                                 layers.Conv2DTranspose(channels[step], 4, strides=2, padding="same",
                                                        activation="relu"),
                                 layers.LayerNormalization()))
        self.full_resolution = [(ActionInjection(channels[0]), layers.Conv2D(channels[0], 3, padding="same",
                                                                             activation="relu"),
                                 layers.LayerNormalization())
                                for _ in range(hparams.full_resolution_action_layers)]
        self.pixel_head = layers.Dense(self.frame_shape[-1] * pixel_values)
        self.state_size = hparams.recurrent_state_size
        if hparams.single_frame and not self.state_size:
            raise ValueError("single_frame=True needs recurrent_state_size > 0: the state is the model's only memory")
        if self.state_size:
            self.recurrent = ConvGRU(self.state_size)
            if not hparams.single_frame:
                self.state_projection = layers.Dense(hparams.hidden_size)
        self.noise_rng = tf.random.Generator.from_seed(seed + 1)

    def initial_state(self, batch_size):
        """The recurrent state before the first predicted frame: [B, H, W, recurrent_state_size] zeros."""
        height, width, _ = self.frame_shape
        return tf.zeros([batch_size, height, width, self.state_size])

    def build(self, *args, **kwargs):
        # Layers build on first use. Keras would otherwise trace `call` in a scratch graph first,
        # where the stochastic model's inject_latent would record its prior loss.
        self.built = True

    def call(self, context_frames, actions, state=None, inject_latent=None, training=False):
        """context_frames [B, k, H, W, C] uint8, actions [B], the recurrent state (None: the
        initial one) and, for the stochastic model, `inject_latent(bottleneck) -> bottleneck`
        -> (pixel logits [B, H, W, C, pixel_values], reward logits [B, 3], end logits [B, 2] (None
        without predict_episode_ends), the next recurrent state).
        The single-frame model reads only the last context frame."""
        hparams = self.hparams
        assert context_frames.shape[1] == hparams.num_context_frames, context_frames.shape
        if hparams.single_frame:
            context_frames = context_frames[:, -1:]
        if training and hparams.input_noise > 0:
            context_frames = pixel_noise(context_frames, hparams.input_noise, self.noise_rng)
        x = stack_frames(context_frames, self.compute_dtype)
        batch, height, width = tf.shape(x)[0], tf.shape(x)[1], tf.shape(x)[2]
        if state is None:
            state = self.initial_state(batch)
        action = tf.one_hot(actions, self.num_actions, dtype=self.compute_dtype)
        if hparams.single_frame:  # the frame and the state before it in; then the state takes in the frame
            frame, x = x, tf.concat([x, tf.cast(state, self.compute_dtype)], axis=-1)
            state = self.recurrent(frame, state)
            x = add_timing_signal(self.embed(x))
        else:
            x = add_timing_signal(self.embed(x))
            if self.state_size:  # a full-resolution memory of what the 4 context frames cannot show
                state = self.recurrent(x, state)
                x = x + self.state_projection(tf.cast(state, self.compute_dtype))
        skips = []
        for dropout, conv, norm in self.encoder:
            skips.append(x)
            x = norm(conv(add_timing_signal(dropout(x, training=training))))
        x = self.bottleneck_action(x, action)
        if inject_latent is not None:
            x = inject_latent(x)
        middle_pooled = self.pooled(x)
        for i, (dropout, conv, norm) in enumerate(self.middle):
            y = conv(dropout(x, training=training))
            x = norm(x + y) if i else y
        for dropout, inject, deconv, norm in self.decoder:
            skip = skips.pop()
            x = deconv(inject(dropout(x, training=training), action))[:, :tf.shape(skip)[1], :tf.shape(skip)[2], :]
            x = add_timing_signal(norm(x + skip))
        for inject, conv, norm in self.full_resolution:  # each cell sees its neighbours and the action
            x = norm(x + conv(inject(x, action)))
        reward_features = tf.concat([middle_pooled, self.pooled(x)], axis=-1)
        reward_logits = self.reward_head(self.reward_hidden(reward_features))
        end_logits = tf.cast(self.end_head(self.end_hidden(reward_features)), tf.float32) if self.predicts_ends else None
        logits = tf.reshape(self.pixel_head(x), (batch, height, width, self.frame_shape[-1], self.pixel_values))
        return tf.cast(logits, tf.float32), tf.cast(reward_logits, tf.float32), end_logits, state

    def pooled(self, x):
        """The reward and end heads' view of features x [B, H, W, C]: their mean over positions
        (SimPLe's), and with head_pooling "mean_and_max" also their max, [B, 2C]. A one-cell
        event (MinAtar's player onto an enemy or the gold) is a hundredth of a 10x10 mean."""
        mean = tf.reduce_mean(x, axis=[1, 2])
        if self.hparams.head_pooling == "mean":
            return mean
        return tf.concat([mean, tf.reduce_max(x, axis=[1, 2])], axis=-1)

    def warm_up(self, frames, actions, latent_for=None, training=False):
        """The state to predict the frame after frames [B, k, H, W, C] from, and the mean pixel
        loss of the predictions made on the way (0 for the stacked model, which starts fresh).

        The single-frame model, as the original, is fed frames 0..k-2 one at a time from a
        fresh state, with actions [B, >= k-1] (actions[:, i] taken on frame i), predicting
        frames 1..k-1. `latent_for(window, target, action)`: the stochastic model's
        inject_latent for each of these steps.
        """
        hparams = self.hparams
        state = self.initial_state(tf.shape(frames)[0])
        if not hparams.single_frame:
            return state, tf.constant(0.0)
        context, losses = hparams.num_context_frames, []
        for i in range(context - 1):
            # The model reads the window's last frame; earlier slots repeat frame 0.
            window = tf.concat([tf.repeat(frames[:, :1], context - 1 - i, axis=1), frames[:, :i + 1]], axis=1)
            inject = latent_for(window, frames[:, i + 1], actions[:, i]) if latent_for else None
            pixel_logits, _, _, state = self(window, actions[:, i], state, inject_latent=inject, training=training)
            pixel_xent = tf.nn.sparse_softmax_cross_entropy_with_logits(
                pixel_classes(frames[:, i + 1], self.pixel_values), pixel_logits)
            losses.append(tf.reduce_mean(tf.nn.relu(pixel_xent - hparams.pixel_loss_cutoff)))
        return state, tf.add_n(losses) / len(losses)

    def loss_and_metrics(self, features, step, training=False):
        """Losses over the window's target frames (`step`, the training step, is unused: this
        model has no schedules). Each target is predicted from real context frames."""
        hparams = self.hparams
        frames, actions, rewards = features["frames"], features["actions"], features["rewards"]
        context = hparams.num_context_frames
        state, warm_up_loss = self.warm_up(frames[:, :context], actions, training=training)
        per_frame = []
        for i in range(hparams.num_target_frames):
            target = context + i
            pixel_logits, reward_logits, end_logits, state = self(frames[:, i:target], actions[:, target - 1],
                                                                  state, training=training)
            frame_weights, step_weights = target_weights(features, target, hparams.end_target)
            per_frame.append(pixel_and_reward_losses(pixel_logits, reward_logits, frames[:, target],
                                                     rewards[:, target - 1], hparams.pixel_loss_cutoff,
                                                     frames[:, target - 1], hparams.changed_pixel_weight,
                                                     frame_weights, step_weights))
            if self.predicts_ends:
                per_frame[-1].update(episode_end_losses(end_logits, end_labels(features, target, hparams.end_target),
                                                        step_weights))
        metrics = {name: tf.add_n([m[name] for m in per_frame]) / len(per_frame) for name in per_frame[0]}
        loss = metrics["pixel_loss"] + hparams.reward_loss_coef * metrics["reward_loss"]
        if self.predicts_ends:
            loss += hparams.end_loss_coef * metrics["end_loss"]
        assert set(metrics) == LOSS_KEYS | self.end_keys, set(metrics)
        if hparams.single_frame:  # the original's extra loss on the frames predicted while warming up
            metrics["warm_up_pixel_loss"] = warm_up_loss
            loss += warm_up_loss
        return loss, metrics

    @tf.function(reduce_retracing=True, autograph=False)
    def start_state(self, history, history_actions, temperature=1.0):
        """The recurrent state for the step after history [B, k, H, W, C] uint8; history_actions
        [B, k-1]: the actions taken on its frames. A deterministic model ignores the temperature."""
        del temperature
        return self.warm_up(history, history_actions)[0]

    @property
    def end_keys(self):
        return {"end_loss", "end_accuracy"} if self.predicts_ends else set()

    @tf.function(reduce_retracing=True, autograph=False)
    def next_frame(self, history, actions, state, temperature=1.0):
        """One step: history [B, k, H, W, C] uint8, actions [B] and the recurrent state (from
        `start_state`) -> the most likely next frames [B, H, W, C] uint8, rewards [B] in
        {-1, 0, 1} and the next state. A deterministic model ignores the temperature."""
        frames, rewards, _, state = self.next_frame_and_end(history, actions, state, temperature)
        return frames, rewards, state

    @tf.function(reduce_retracing=True, autograph=False)
    def next_frame_and_end(self, history, actions, state, temperature=1.0, expected_reward=False):
        """`next_frame`, and also ends [B] bool: whether each predicted frame is its episode's
        last (always False for a model without predict_episode_ends). With expected_reward
        (a Python bool), rewards are the head's mean (`expected_rewards`), not its likeliest."""
        del temperature
        pixel_logits, reward_logits, end_logits, state = self(history, actions, state, training=False)
        frames, rewards = most_likely(pixel_logits, reward_logits, self.hparams.frame_decoding)
        if expected_reward:
            rewards = expected_rewards(reward_logits)
        return frames, rewards, likeliest_ends(end_logits, tf.shape(actions)[0]), state

    @tf.function(reduce_retracing=True, autograph=False)
    def reward_probabilities(self, history, actions, state, temperature=1.0):
        """The reward head's distribution [B, 3] over rewards -1, 0, 1 for the step `next_frame`
        takes (for diagnostics: how sure the model is, not only its likeliest reward)."""
        del temperature
        _, reward_logits, _, _ = self(history, actions, state, training=False)
        return tf.nn.softmax(reward_logits)

    @tf.function(reduce_retracing=True, autograph=False)
    def end_probabilities(self, history, actions, state, temperature=1.0):
        """[B] the end head's probability that the frame `next_frame` predicts is its episode's
        last (for diagnostics: `next_frame_and_end` ends where it is above 0.5)."""
        del temperature
        _, _, end_logits, _ = self(history, actions, state, training=False)
        return end_probabilities(end_logits, tf.shape(actions)[0])

    def infer(self, features):
        return predict_after_context(self, features)


@register_model
def next_frame_basic_deterministic(hparams, frame_shape, num_actions, pixel_values=256):
    # The input-noise seed comes from numpy, which keras.utils.set_random_seed seeds with the run's seed.
    return NextFrameBasicDeterministic(hparams, frame_shape, num_actions, pixel_values,
                                       seed=int(np.random.randint(2**31 - 1)))
