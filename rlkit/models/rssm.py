"""DreamerV2's world model (Hafner et al. 2021): a recurrent state-space model with discrete latents.

The state is (h, z): h a deterministic GRU state (layer-normed, update-gate bias -1), z
`stoch_groups` categoricals of `stoch_classes` classes each, one-hot, sampled with
straight-through gradients. Each step:

    h_t = GRU(h_{t-1}, MLP([z_{t-1}, a_{t-1}]))
    prior     p(z_t | h_t)            = MLP(h_t)
    posterior q(z_t | h_t, x_t)       = MLP([h_t, encoder(x_t)])
    features  s_t = [h_t, z_t]  ->  decoder (the frame), reward and continue heads

Frames are decoded per cell as Bernoulli logits where a channel takes 2 values (MinAtar's on/off
cells) and as a unit-variance Gaussian over pixels scaled to [-0.5, 0.5] otherwise (Atari); a
gymnasium env's vector observations (`pixel_values` 0) go through MLPs and are decoded as a
unit-variance Gaussian over their values. The reward and continue heads read the state after
each action (rlkit's windows: actions[t] taken on frames[t], rewards[t] and ends[t] following
it): the next posterior state inside the window, or a prior step where none follows in the same
episode (the window's last step; an episode's last, where a window runs on into another
episode and the state starts afresh at `firsts`), so the step that ended an episode is a
continue target too.

The loss is `world_model_loss` (rlkit.models.rssm_losses, with the rest of its math as pure
functions): frame NLL + reward NLL + continue_scale x continue NLL + kl_scale x the balanced KL
(`kl_balanced`: alpha on the prior side, free nats).
The model is registered as "rssm" on rlkit's world-model interface (rlkit.models.world_model),
so imagine, the player, the evaluator and the drift checks step it as they step SimPLe's.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from rlkit.models.optimizers import make_optimizer
from rlkit.models.rssm_losses import reward_detection, world_model_loss
from rlkit.models.twohot import NUM_BINS, bins, nearest_value_probabilities, twohot_mean
from rlkit.models.registry import register_model

# Sampling the latents.


def straight_through_sample(logits, seed=None, temperature=1.0):
    """One-hot samples of categoricals `logits` [..., classes] whose gradient is the
    probabilities' (sample + probs - stop_gradient(probs)); temperature 0 takes the likeliest
    class.

    Sampled by inverse CDF: the first class whose cumulative probability passes a uniform draw.
    TensorFlow's multinomial op took 3x as long on this CPU (docs/benchmarks.md), and the
    world model and imagination draw from 512-2,048 categoricals at every step."""
    probabilities = tf.nn.softmax(logits)
    classes = logits.shape[-1]
    if temperature == 0:
        index = tf.argmax(logits, axis=-1)
    else:
        tempered = probabilities if temperature == 1 else tf.nn.softmax(logits / temperature)
        shape = tf.concat([tf.shape(logits)[:-1], [1]], 0)
        uniform = tf.random.stateless_uniform(shape, seed) if seed is not None else tf.random.uniform(shape)
        passed = tf.cast(tf.math.cumsum(tempered, axis=-1) < uniform, tf.int32)
        index = tf.minimum(tf.reduce_sum(passed, -1), classes - 1)  # a cumsum short of 1 by rounding
    one_hot = tf.one_hot(index, classes, dtype=probabilities.dtype)
    return one_hot + probabilities - tf.stop_gradient(probabilities)


def uniform_mix(logits, mix):
    """DreamerV3's "unimix": the logits of (1 - mix) x softmax(logits) + mix x uniform, so no
    class's probability falls below mix / classes and no categorical becomes deterministic
    (mix 0: the logits as they are, DreamerV2's)."""
    if not mix:
        return logits
    probabilities = (1.0 - mix) * tf.nn.softmax(logits) + mix / logits.shape[-1]
    return tf.math.log(probabilities)


# The networks.


class LayerNormGRU(layers.Layer):
    """DreamerV2's GRU cell: one dense layer over [input, h] for the three gates, layer-normed,
    the update gate's bias at -1 (so the state changes slowly at first)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.gates = layers.Dense(3 * units, use_bias=False)
        self.norm = layers.LayerNormalization()

    def call(self, inputs, state):
        parts = self.norm(self.gates(tf.concat([inputs, state], -1)))
        reset, candidate, update = tf.split(parts, 3, axis=-1)
        reset = tf.sigmoid(reset)
        candidate = tf.tanh(reset * candidate)
        update = tf.sigmoid(update - 1.0)
        return update * candidate + (1.0 - update) * state


def policy(compute_dtype):
    """The Keras dtype policy of a layer computing in `compute_dtype`: float32, or bfloat16 with
    float32 variables ("mixed_bfloat16"; the variables, and so checkpoints, are the same either way)."""
    return {"float32": "float32", "bfloat16": "mixed_bfloat16"}[compute_dtype]


def mlp(units, num_layers, output, name, compute_dtype="float32", zero_output=False):
    """ELU layers, then a linear output layer in float32 (logits, means, values: what losses and
    samplers read), whatever the hidden layers compute in; `zero_output` starts that layer at 0
    (DreamerV3's two-hot heads: a uniform categorical over the bins, read out as 0)."""
    initializer = "zeros" if zero_output else "glorot_uniform"
    return keras.Sequential([layers.Dense(units, activation="elu", dtype=policy(compute_dtype))
                             for _ in range(num_layers)] + [layers.Dense(output, kernel_initializer=initializer)],
                            name=name)


class RSSM(keras.Model):
    """The world model; see the module docstring. `frame_shape` (H, W, C), `num_actions` and
    `pixel_values` come from the env it models. `compute_dtype` "bfloat16" computes the encoder's,
    decoder's and heads' matmuls and convolutions in bfloat16 (float32 variables, outputs, states
    and losses): for CPUs with native bfloat16 (AMX, AVX512-BF16), where it is several times
    float32's speed on large matmuls (docs/benchmarks.md). The recurrent step's layers (the
    state input, the GRU, the prior and the posterior) compute in float32 whatever it says: their
    16-64-row matmuls, one per step, gained less from bfloat16 than casting their kernels at
    every step cost (docs/benchmarks.md, lever 10)."""

    def __init__(self, hparams, frame_shape, num_actions, pixel_values, compute_dtype="float32"):
        super().__init__(name="rssm")
        self.hparams, self.frame_shape = hparams, tuple(frame_shape)
        self.num_actions, self.pixel_values = num_actions, pixel_values
        self.groups, self.classes = hparams.stoch_groups, hparams.stoch_classes
        self.unimix = hparams.unimix
        dtype = policy(compute_dtype)
        self.vector = pixel_values == 0  # a gymnasium env's observation vectors, not frames
        if self.vector:
            self.encoder = mlp(hparams.hidden_size, 1, hparams.hidden_size, "encoder", compute_dtype)
            self.decoder = mlp(hparams.hidden_size, 2, self.frame_shape[0], "decoder", compute_dtype)
        else:
            self.encoder = keras.Sequential(
                [layers.Conv2D(hparams.encoder_depth * 2 ** i, kernel, strides=stride, activation="elu", dtype=dtype)
                 for i, (kernel, stride) in enumerate(zip(hparams.encoder_kernels, hparams.encoder_strides))]
                + [layers.Flatten()], name="encoder")
            self.decoder = self._decoder(hparams, *self.frame_shape, dtype)
        self.state_input = layers.Dense(hparams.hidden_size, activation="elu", name="state_input")
        self.gru = LayerNormGRU(hparams.deter_size, name="gru")
        self.prior_net = mlp(hparams.hidden_size, 1, self.groups * self.classes, "prior")
        self.posterior_net = mlp(hparams.hidden_size, 1, self.groups * self.classes, "posterior")
        self.twohot_reward = hparams.reward_head == "twohot"
        self.reward_head = mlp(hparams.head_units, hparams.head_layers, NUM_BINS if self.twohot_reward else 1,
                               "reward", compute_dtype, zero_output=self.twohot_reward)
        self.continue_head = mlp(hparams.head_units, hparams.head_layers, 1, "continue", compute_dtype)

    @staticmethod
    def _decoder(hparams, height, width, channels, dtype):
        """The last layer in float32 (the frame's logits or means), the others in `dtype`."""
        if hparams.decoder_kernels:  # the paper's Atari decoder: 1x1 -> transposed convs to 64x64
            convs = [layers.Conv2DTranspose(hparams.encoder_depth * 2 ** (len(hparams.decoder_kernels) - i - 2), kernel,
                                            strides=2, activation="elu", dtype=dtype)
                     for i, kernel in enumerate(hparams.decoder_kernels[:-1])]
            return keras.Sequential([layers.Dense(32 * hparams.encoder_depth, dtype=dtype), layers.Reshape((1, 1, -1))]
                                    + convs + [layers.Conv2DTranspose(channels, hparams.decoder_kernels[-1], strides=2)],
                                    name="decoder")
        # Small frames (MinAtar's 10x10): features -> a map of the frame's size -> a 3x3 conv.
        return keras.Sequential([layers.Dense(height * width * hparams.encoder_depth, activation="elu", dtype=dtype),
                                 layers.Reshape((height, width, hparams.encoder_depth)),
                                 layers.Conv2D(channels, 3, padding="same")], name="decoder")

    # One step of the state.

    def initial_state(self, batch):
        return (tf.zeros([batch, self.hparams.deter_size]), tf.zeros([batch, self.groups, self.classes]))

    def features(self, state):
        h, z = state
        return tf.concat([h, tf.reshape(z, [-1, self.groups * self.classes])], -1)

    def _logits(self, net, inputs):
        return uniform_mix(tf.reshape(net(inputs), [-1, self.groups, self.classes]), self.unimix)

    def advance(self, state, actions):
        """h_{t+1} from the state and the action taken on it (int [B] or one-hot/continuous [B, A])."""
        h, z = state
        actions = tf.convert_to_tensor(actions)
        if actions.dtype.is_integer:
            actions = tf.one_hot(actions, self.num_actions)
        inputs = self.state_input(tf.concat([tf.reshape(z, [-1, self.groups * self.classes]), actions], -1))
        return self.gru(inputs, h)

    def prior_step(self, state, actions, temperature=1.0, seed=None):
        """The next state imagined from `state` and `actions`: (state, prior logits)."""
        h = self.advance(state, actions)
        logits = self._logits(self.prior_net, h)
        return (h, straight_through_sample(logits, seed, temperature)), logits

    def observe_step(self, h, embedding, seed=None):
        """The posterior state at deterministic state `h` given the frame's `embedding`."""
        logits = self._logits(self.posterior_net, tf.concat([h, embedding], -1))
        return (h, straight_through_sample(logits, seed)), logits

    def embed(self, frames):
        """uint8 frames [..., H, W, C] -> embeddings [..., E] (cells or pixels scaled to [-0.5, 0.5]);
        vector observations [..., D] as they are."""
        shape, rank = tf.shape(frames), len(self.frame_shape)
        scaled = tf.cast(frames, tf.float32) if self.vector else tf.cast(frames, tf.float32) / 255.0 - 0.5
        flat = tf.reshape(scaled, tf.concat([[-1], shape[-rank:]], 0))
        embedded = tf.cast(self.encoder(flat), tf.float32)
        return tf.reshape(embedded, tf.concat([shape[:-rank], [embedded.shape[-1]]], 0))

    def observe(self, frames, actions, firsts=None, seed=None):
        """Filters windows: frames [B, T, H, W, C] with actions [B, T] (actions[t] taken on
        frames[t]); firsts [B, T] marks the first step of an episode (a window runs on into
        another episode), where the state starts afresh, as it does at the window's start.

        Returns a dict: the posterior states `h` [B, T, D] and `z` [B, T, G, K], their
        `posterior_logits` and `prior_logits` [B, T, G, K], and `h_after` [B, T, D], the
        deterministic state after each action (h_after[t] is h[t + 1] unless an episode starts there).

        The same states as observe_step and advance taken step by step (tests/test_rssm.py
        holds them to it), with what does not depend on the recurrence taken out of the loop, as
        one large matmul each instead of T small ones: the posterior's first layer on the
        embeddings (its input is [h, embedding], so its kernel splits into an h part and an
        embedding part) and the prior's logits (a function of h alone, not fed back)."""
        embeddings = self.embed(frames)
        batch, length = frames.shape[0] or tf.shape(frames)[0], frames.shape[1]
        deter = self.hparams.deter_size
        if not self.posterior_net.built:
            self.posterior_net.build((None, deter + embeddings.shape[-1]))
        first_layer, rest = self.posterior_net.layers[0], self.posterior_net.layers[1:]
        kernel = first_layer.kernel
        from_embeddings = tf.einsum("bte,eu->btu", embeddings, kernel[deter:])
        # Per-step inputs unstacked once: a slice per step would cost a full-size gradient each.
        from_embeddings = tf.unstack(from_embeddings + first_layer.bias, axis=1)
        step_actions = tf.unstack(actions, axis=1)
        starts = None if firsts is None else tf.unstack(tf.cast(firsts, tf.bool)[:, :, None], axis=1)
        h_kernel = kernel[:deter]
        h = self.initial_state(batch)[0]
        out = {name: [] for name in ("h", "z", "posterior_logits", "h_after")}
        for t in range(length):
            if t > 0:
                h = out["h_after"][-1]
                if starts is not None:
                    h = tf.where(starts[t], tf.zeros_like(h), h)
            from_h = tf.matmul(h, h_kernel)
            hidden = first_layer.activation(from_h + from_embeddings[t])
            for layer in rest:
                hidden = layer(hidden)
            logits = uniform_mix(tf.reshape(hidden, [-1, self.groups, self.classes]), self.unimix)
            z = straight_through_sample(logits, None if seed is None else seed + t)
            out["h"].append(h)
            out["z"].append(z)
            out["posterior_logits"].append(logits)
            out["h_after"].append(self.advance((h, z), step_actions[t]))
        states = {name: tf.stack(values, 1) for name, values in out.items()}
        hs = states["h"]
        prior = self._logits(self.prior_net, tf.reshape(hs, [-1, deter]))
        states["prior_logits"] = tf.reshape(prior, tf.concat([tf.shape(hs)[:2], [self.groups, self.classes]], 0))
        return states

    def heads(self, features):
        """(reward means, continue logits) of the state reached after each action."""
        reward_outputs, continue_logits = self.head_outputs(features)
        return self.reward_means(reward_outputs), continue_logits

    def head_outputs(self, features):
        """(the reward head's outputs: its mean, or logits over the two-hot bins; continue logits)."""
        rewards = self.reward_head(features)
        return (rewards if self.twohot_reward else tf.squeeze(rewards, -1)), tf.squeeze(self.continue_head(features), -1)

    def reward_means(self, reward_outputs):
        return twohot_mean(reward_outputs, bins()) if self.twohot_reward else reward_outputs

    def decode(self, features):
        return self.decoder(features)

    # rlkit's world-model interface (rlkit.models.world_model).

    def loss_and_metrics(self, features, step=None, training=True):
        loss, metrics, _ = self.train_loss(features)
        return loss, metrics

    def train_loss(self, features):
        """(loss, metrics, the posterior states (h [B, T, D], z [B, T, G, K])) on a batch of windows
        (frames, actions, rewards, ends and, where a window runs into another episode, firsts):
        the states are where the actor-critic starts imagining from.

        The reward and continue heads read the state after each action: the next posterior state
        inside the window, or a prior step where none follows in the same episode (the window's
        last step, an episode's last)."""
        frames, actions = features["frames"], features["actions"]
        rewards, ends = tf.cast(features["rewards"], tf.float32), features["ends"]
        firsts = features.get("firsts")
        batch, length = frames.shape[0], frames.shape[1]
        groups, classes = self.groups, self.classes
        states = self.observe(frames, actions, firsts)
        hs, zs = states["h"], states["z"]
        flat = self.features((tf.reshape(hs, [batch * length, -1]), tf.reshape(zs, [batch * length, groups, classes])))
        frame_outputs = tf.reshape(self.decode(flat), [batch, length] + list(self.frame_shape))
        h_after = tf.reshape(states["h_after"], [batch * length, -1])
        z_prior = tf.reshape(straight_through_sample(self._logits(self.prior_net, h_after)),
                             [batch, length, groups, classes])
        follows = tf.ones([batch, length - 1], tf.bool) if firsts is None else ~tf.cast(firsts[:, 1:], tf.bool)
        follows = tf.concat([follows, tf.zeros([batch, 1], tf.bool)], 1)[:, :, None, None]
        # The next step's posterior z where one follows (never at the last step, so rolling zs's
        # first step round to it costs nothing; a slice's gradient took 2 ms a step on this CPU).
        z_after = tf.where(follows, tf.roll(zs, -1, axis=1), z_prior)
        after = self.features((h_after, tf.reshape(z_after, [batch * length, groups, classes])))
        reward_outputs, continue_logits = self.head_outputs(after)
        reward_outputs = tf.reshape(reward_outputs, tf.concat([[batch, length], tf.shape(reward_outputs)[1:]], 0))
        continue_logits = tf.reshape(continue_logits, [batch, length])
        reward_means = self.reward_means(reward_outputs)
        hp = self.hparams
        loss, metrics = world_model_loss(frame_outputs, frames, reward_outputs, rewards, continue_logits, ends,
                                         states["posterior_logits"], states["prior_logits"], self.pixel_values,
                                         hp.kl_scale, hp.kl_balance, hp.free_nats, hp.continue_scale,
                                         hp.free_nats_per_step, hp.reward_head)
        predicted = self._frames_of(frame_outputs)
        same = (tf.abs(predicted - tf.cast(frames, tf.float32)) < 0.1 if self.vector  # within 0.1, for vectors
                else tf.equal(predicted, frames))
        metrics.update(
            pixel_loss=metrics["image_loss"],
            pixel_accuracy=tf.reduce_mean(tf.cast(same, tf.float32)),
            **reward_detection(reward_means, rewards))
        return loss, metrics, (hs, zs)

    def _frames_of(self, frame_outputs):
        """The decoder's likeliest uint8 frames (vectors: its means)."""
        if self.vector:
            return frame_outputs
        if self.pixel_values == 2:
            return tf.cast(tf.cast(frame_outputs > 0, tf.int32) * 255, tf.uint8)
        return tf.cast(tf.clip_by_value(tf.round((frame_outputs + 0.5) * 255.0), 0, 255), tf.uint8)

    def start_state(self, history, history_actions, temperature=1.0):
        """The posterior state after the frames of `history` [B, k, ...] (the first k-1 had
        `history_actions` taken on them): a state on which the next action is taken."""
        actions = tf.concat([tf.cast(history_actions, tf.int32),
                             tf.zeros([tf.shape(history)[0], 1], tf.int32)], 1)
        states = self.observe(history, actions)
        return states["h"][:, -1], states["z"][:, -1]

    def next_frame_and_end(self, history, actions, state, temperature=1.0, expected_reward=False):
        state, _ = self.prior_step(state, tf.convert_to_tensor(actions, tf.int32), float(temperature))
        features = self.features(state)
        reward_means, continue_logits = self.heads(features)
        rewards = reward_means if expected_reward else tf.cast(tf.clip_by_value(tf.round(reward_means), -1, 1),
                                                               tf.int32)
        return self._frames_of(self.decode(features)), rewards, continue_logits < 0, state

    def next_frame(self, history, actions, state, temperature=1.0):
        frames, rewards, _, state = self.next_frame_and_end(history, actions, state, temperature)
        return frames, rewards, state

    def reward_probabilities(self, history, actions, state, temperature=1.0):
        """[B, 3] the probabilities of rewards -1, 0 and 1. A two-hot head (DreamerV3): the mass of
        the bins nearest each. A Gaussian head (unit variance, DreamerV2): each value weighted by
        its density there, normalised (the likeliest is the rounded mean `next_frame` predicts), so
        that a head unsure of a reward still ranks its steps."""
        reward_outputs, _ = self._heads_after(state, actions, temperature)
        rewards = [-1.0, 0.0, 1.0]  # the world-model interface's rewards (rlkit.models.world_model)
        if self.twohot_reward:
            return nearest_value_probabilities(reward_outputs, bins(), rewards)
        return tf.nn.softmax(-0.5 * tf.square(reward_outputs[:, None] - tf.constant(rewards)), -1)

    def end_probabilities(self, history, actions, state, temperature=1.0):
        """[B] 1 - the continue head's probability for the step `next_frame` takes."""
        _, continue_logits = self._heads_after(state, actions, temperature)
        return tf.nn.sigmoid(-continue_logits)

    def _heads_after(self, state, actions, temperature):
        """(the reward head's outputs, continue logits) of the prior step `next_frame` takes, without its frame."""
        state, _ = self.prior_step(state, tf.convert_to_tensor(actions, tf.int32), float(temperature))
        return self.head_outputs(self.features(state))

    def infer(self, features):
        context = self.hparams.num_context_frames
        state = self.start_state(features["frames"][:, :context], features["actions"][:, :context - 1])
        frames, rewards, _ = self.next_frame(None, features["actions"][:, context - 1], state, 0.0)
        return {"frames": frames, "rewards": rewards}

    def make_optimizer(self):
        """Adam (epsilon 1e-5), gradients clipped to global norm `clip_grad_norm`: DreamerV2's."""
        return make_optimizer(self.hparams.learning_rate, epsilon=1e-5, global_clipnorm=self.hparams.clip_grad_norm)


@register_model
def rssm(hparams, frame_shape, num_actions, pixel_values):
    return RSSM(hparams, frame_shape, num_actions, pixel_values)


def parameter_count(model):
    return int(sum(np.prod(v.shape) for v in model.trainable_variables))
