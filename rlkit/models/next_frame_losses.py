"""The loss math of SimPLe's video models (`next_frame`, `next_frame_sd`): pure functions of
tensors, each returning its losses and accuracies (or the labels and weights they take).

A window's frame i+1 follows action i, which earned reward i and may have ended the episode
(`FrameStore.window_dataset`); the functions below take one target frame of such a window.
"""

import tensorflow as tf

from rlkit.models.world_model import pixel_classes


def weighted_mean(values, weights):
    """The mean of values [B, ...] over every axis, each example weighted by weights [B] (None:
    the plain mean)."""
    if weights is None:
        return tf.reduce_mean(values)
    per_example = tf.reduce_mean(tf.reshape(values, (tf.shape(values)[0], -1)), axis=1)
    return tf.reduce_sum(per_example * weights) / tf.maximum(tf.reduce_sum(weights), 1.0)


def target_weights(features, target, end_target):
    """For a window's target frame at position `target`: (frame_weights [B], step_weights [B]),
    None where every example counts.

    end_target "last_frame": windows lie inside episodes, and the end head learns whether the
    target frame was its episode's last. "ending_step" (not in SimPLe): it learns whether the
    step taken on the frame before (with the action the model is given) ended the episode, as
    the env reports it; windows run past episodes' ends (`FrameStore.window_dataset`'s
    past_end), so a target frame counts where it was stored, and its step's reward and end
    where the frame before it was."""
    if end_target == "last_frame":
        return None, None
    stored = tf.cast(features["stored"], tf.float32)
    return stored[:, target], stored[:, target - 1]


def end_labels(features, target, end_target):
    """[B] the end head's labels for the target frame at `target` (see `target_weights`)."""
    return features["ends"][:, target if end_target == "last_frame" else target - 1]


def pixel_and_reward_losses(pixel_logits, reward_logits, target_frame, target_reward, cutoff,
                            previous_frame=None, changed_pixel_weight=1.0, frame_weights=None, step_weights=None):
    """Losses and accuracies of one predicted frame; all means over the batch, the frame's
    weighted by frame_weights [B] and the reward's by step_weights [B] (None: plain means).

    The pixel cross-entropy below `cutoff` counts as zero (relu(xent - cutoff)), so pixels the
    model already predicts well stop pulling on it, as in SimPLe. Not in SimPLe: with
    changed_pixel_weight w != 1, a pixel whose target differs from `previous_frame` (the real
    frame before it) counts w times (pixel_loss is then that weighted mean): a one-cell object
    that moves is 2 of MinAtar's 400 cells a channel, and a model that fades it loses little.
    """
    target_classes = pixel_classes(target_frame, pixel_logits.shape[-1])
    pixel_losses = tf.nn.relu(tf.nn.sparse_softmax_cross_entropy_with_logits(target_classes, pixel_logits) - cutoff)
    if changed_pixel_weight != 1.0:
        changed = tf.cast(tf.not_equal(target_frame, previous_frame), tf.float32)
        pixel_losses *= 1.0 + (changed_pixel_weight - 1.0) * changed
    reward_class = tf.cast(target_reward, tf.int32) + 1
    reward_xent = tf.nn.sparse_softmax_cross_entropy_with_logits(reward_class, reward_logits)
    predicted_pixels = tf.argmax(pixel_logits, axis=-1, output_type=tf.int32)
    predicted_rewards = tf.argmax(reward_logits, axis=-1, output_type=tf.int32)
    return {
        "pixel_loss": weighted_mean(pixel_losses, frame_weights),
        "reward_loss": weighted_mean(reward_xent, step_weights),
        "pixel_accuracy": weighted_mean(tf.cast(predicted_pixels == target_classes, tf.float32), frame_weights),
        "reward_accuracy": weighted_mean(tf.cast(predicted_rewards == reward_class, tf.float32), step_weights),
    }


def episode_end_losses(end_logits, target_ends, weights=None):
    """Loss and accuracy of the end head (the optional `predict_episode_ends`); target_ends [B]
    in {0, 1}, each example weighted by weights [B] (None: all count).

    Ends are rare (one per episode: ~8% of targets on MinAtar Breakout early on, 1 in 2,500 on
    Freeway), so the loss weighs the ends and the others as two equal halves and the likelier
    class is the one a balanced error rate picks."""
    target = tf.cast(target_ends, tf.int32)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(target, end_logits)
    weights = tf.ones_like(xent) if weights is None else weights
    last = tf.cast(target, tf.float32) * weights

    def mean_over(chosen):
        return tf.reduce_sum(xent * chosen) / tf.maximum(tf.reduce_sum(chosen), 1.0)
    predicted = tf.argmax(end_logits, axis=-1, output_type=tf.int32)
    return {"end_loss": 0.5 * mean_over(last) + 0.5 * mean_over(weights - last),
            "end_accuracy": weighted_mean(tf.cast(predicted == target, tf.float32), weights)}


def likeliest_ends(end_logits, batch):
    """[B] bool: the predicted frames that end their episodes (none without an end head)."""
    if end_logits is None:
        return tf.zeros([batch], bool)
    return tf.argmax(end_logits, axis=-1, output_type=tf.int32) == 1


def end_probabilities(end_logits, batch):
    """[B] the end head's probability that each predicted frame is its episode's last (0
    without an end head)."""
    if end_logits is None:
        return tf.zeros([batch], tf.float32)
    return tf.nn.softmax(end_logits)[:, 1]
