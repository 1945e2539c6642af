"""What every world model offers, and `imagine`: rollouts fed on the model's own predictions.

A world model is a registered `keras.Model` built as `get_model(hparams.model)(hparams,
frame_shape, num_actions, pixel_values)`: its hparams (a world-model set), and the (H, W, C)
frames, the number of actions and the number of values a channel takes (256 on Atari, 2 on
MinAtar: `make_env.pixel_values`) of the env it models, which come from the env, never from the
set. Frames are uint8 either way; a model predicts each channel value as one of `pixel_values`
classes (`pixel_classes`, `likeliest_frames`). It has

    start_state(history, history_actions, temperature) -> state
        the recurrent state to step on from history [B, k, H, W, C] uint8, whose first k-1
        frames had history_actions [B, k-1] taken on them
    next_frame(history, actions, state, temperature) -> (frames, rewards, state)
        history [B, k, H, W, C] uint8, actions [B] int -> frames [B, H, W, C] uint8, rewards
        [B] in {-1, 0, 1}; a stochastic model samples its latent at `temperature`, a
        deterministic one ignores it
    next_frame_and_end(history, actions, state, temperature, expected_reward=False)
        -> (frames, rewards, ends, state): next_frame, and ends [B] bool (the predicted frame
        is its episode's last, or with end_target=ending_step, the step ends the episode;
        always False without predict_episode_ends); with
        expected_reward, rewards [B] float32 are the head's mean, P(1) - P(-1), instead of
        its likeliest class
    reward_probabilities(history, actions, state, temperature) -> [B, 3]
        the reward head's distribution over -1, 0, 1 for the step next_frame takes
    loss_and_metrics(features, step, training) -> (loss, metrics)
        on windows of stored experience (`FrameStore.window_dataset`) at training step `step`
        (for the models' schedules); metrics hold at least FRAME_METRICS
    infer(features) -> {"frames", "rewards"} predicted after each window's context

The simulated env, dream summaries, reward accuracy, the evaluator and the player all step a
world model through `imagine`.
"""

import numpy as np
import tensorflow as tf

def end_target(hparams):
    """What a world model's ends are: "last_frame", the frame it predicts is its episode's last,
    or "ending_step", the step it is given ends the episode (SimPLe's models: their hparams'
    end_target). DreamerV2's RSSM reads its continue head on the state after each action, so
    its ends are always ending steps."""
    if hparams.get("model") == "rssm":
        return "ending_step"
    return hparams.get("end_target", "last_frame")


# Per predicted frame, means over the batch: what every world model reports.
LOSS_KEYS = frozenset({"pixel_loss", "reward_loss", "pixel_accuracy", "reward_accuracy"})


def append_frame(history, frame):
    """The window after `frame`: [B, k, ...] history, oldest dropped, `frame` [B, ...] appended."""
    return tf.concat([history[:, 1:], tf.cast(frame, history.dtype)[:, None]], axis=1)


def pixel_classes(frames, num_classes):
    """uint8 frames -> each channel value's class: the value itself with 256 classes; with 2, 0
    and 255 (MinAtar's off and on) -> 0 and 1."""
    return tf.cast(frames, tf.int32) * (num_classes - 1) // 255


def likeliest_frames(pixel_logits):
    """Pixel logits [..., classes] -> the likeliest frames, uint8 values (inverse of `pixel_classes`)."""
    num_classes = pixel_logits.shape[-1]
    classes = tf.argmax(pixel_logits, axis=-1, output_type=tf.int32)
    return tf.cast(classes * 255 // (num_classes - 1), tf.uint8)


def object_frames(pixel_logits):
    """On/off frames (2 classes, MinAtar's) from pixel logits [B, H, W, C, 2] that keep an object
    the model spreads over neighbouring cells: a cell is on where it is likelier on than off, as
    `likeliest_frames`, and also where it is the likeliest cell of its 3x3 neighbourhood, that
    neighbourhood holds at least half an object (its cells' P(on) sum to 0.5 or more) and the
    cell a third of that. The likeliest frame draws none of the cells of an object whose position
    the model is unsure of (P(on) 0.3-0.4 on each of two or three cells), so in a rollout fed on
    its own frames the object is gone for good (docs/results.md: Seaquest's submarine and
    torpedoes, Space Invaders' bullets)."""
    on = tf.nn.softmax(pixel_logits)[..., 1]
    channels = on.shape[-1]
    neighbourhood = tf.nn.depthwise_conv2d(on, tf.ones([3, 3, channels, 1]), [1, 1, 1, 1], "SAME")
    # Ties (two cells equally likely) go to the later cell, so an object is drawn once.
    height, width = on.shape[1], on.shape[2]
    order = tf.reshape(tf.range(height * width, dtype=tf.float32) / (height * width), [1, height, width, 1])
    ranked = on + 1e-4 * order
    peak = ranked >= tf.nn.max_pool2d(ranked, 3, 1, "SAME")
    kept = peak & (neighbourhood >= 0.5) & (3.0 * on >= neighbourhood)
    return tf.cast(tf.where((on > 0.5) | kept, 255, 0), tf.uint8)


FRAME_DECODINGS = {"likeliest": likeliest_frames, "objects": object_frames}


def most_likely(pixel_logits, reward_logits, frame_decoding="likeliest"):
    """The frames [B, H, W, C] uint8 (the likeliest, or `object_frames`) and the likeliest
    rewards [B] in {-1, 0, 1}."""
    frames = FRAME_DECODINGS[frame_decoding](pixel_logits)
    return frames, tf.argmax(reward_logits, axis=-1, output_type=tf.int32) - 1


def expected_rewards(reward_logits):
    """The reward head's mean [B] float32, P(1) - P(-1): unlike the likeliest reward, not 0
    wherever a reward is less likely than none (rare rewards; docs/results.md)."""
    probabilities = tf.nn.softmax(reward_logits)
    return probabilities[:, 2] - probabilities[:, 0]


def predict_after_context(model, features):
    """A world model's predicted frame and reward after each window's context."""
    context = model.hparams.num_context_frames
    history, actions = features["frames"][:, :context], features["actions"]
    state = model.start_state(history, actions[:, :context - 1])
    frames, rewards, _ = model.next_frame(history, actions[:, context - 1], state)
    return {"frames": frames, "rewards": rewards}


def imagine(model, history, actions, state=None, temperature=1.0, history_actions=None):
    """Steps `model` through `actions`, each step on the frames it predicted before.

    history: [B, k, H, W, C] uint8, the last k frames (real or imagined); actions: [B, T], the
    action taken after each frame; state: the model's recurrent state (None: the model starts
    from `history`, whose first k-1 frames had history_actions [B, k-1] taken on them; None:
    no-ops, as after a reset).
    Returns numpy (frames [B, T, H, W, C] uint8, rewards [B, T] int32, ends [B, T] bool (each
    frame predicted to be its episode's last; all False without predict_episode_ends), the last k
    frames [B, k, H, W, C], the model's state after them), in `next_frame_and_end`'s order.
    """
    history = tf.convert_to_tensor(history, tf.uint8)
    actions = np.asarray(actions, np.int32)
    batch, context = history.shape[0], model.hparams.num_context_frames
    assert history.shape[1] == context and history.shape[2:] == model.frame_shape, (history.shape, model.frame_shape)
    assert actions.ndim == 2 and actions.shape[0] == batch and actions.shape[1] > 0, actions.shape
    temperature = tf.constant(temperature, tf.float32)
    if state is None:
        if history_actions is None:
            history_actions = np.zeros((batch, context - 1), np.int32)
        state = model.start_state(history, tf.constant(history_actions, tf.int32), temperature)
    frames, rewards, ends = [], [], []
    for t in range(actions.shape[1]):
        frame, reward, end, state = model.next_frame_and_end(history, actions[:, t], state, temperature)
        history = append_frame(history, frame)
        frames.append(frame.numpy())
        rewards.append(reward.numpy())
        ends.append(end.numpy())
    return np.stack(frames, axis=1), np.stack(rewards, axis=1), np.stack(ends, axis=1), history.numpy(), state
