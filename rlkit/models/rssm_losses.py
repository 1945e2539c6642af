"""The loss math of DreamerV2's world model (`rssm`; DreamerV3's options too): pure functions of
tensors. `world_model_loss` is frame NLL + reward NLL + continue_scale x continue NLL +
kl_scale x the balanced KL, returning (loss, {term: value}); `reward_detection` says how the
reward head does on the rare rewarded steps.
"""

import tensorflow as tf

from rlkit.models.twohot import bins, twohot_loss
from rlkit.models.world_model import pixel_classes


def categorical_kl(logits_p, logits_q):
    """KL(p || q) of `groups` categoricals [..., groups, classes], summed over the groups."""
    log_p, log_q = tf.nn.log_softmax(logits_p), tf.nn.log_softmax(logits_q)
    return tf.reduce_sum(tf.nn.softmax(logits_p) * (log_p - log_q), axis=[-2, -1])


def kl_balanced(posterior_logits, prior_logits, balance, free_nats, free_nats_per_step=False):
    """DreamerV2's KL balancing: balance x KL(sg(post) || prior) trains the prior toward the
    posterior, (1 - balance) x KL(post || sg(prior)) regularises the posterior; each mean is
    floored at `free_nats` (DreamerV2), or each step's KL before the mean (DreamerV3's free bits,
    `free_nats_per_step`; its dyn 0.5 and rep 0.1 are kl_scale 0.6 at balance 5/6).
    Returns (loss, the plain KL's mean)."""
    to_prior = categorical_kl(tf.stop_gradient(posterior_logits), prior_logits)
    to_posterior = categorical_kl(posterior_logits, tf.stop_gradient(prior_logits))
    if free_nats_per_step:
        to_prior, to_posterior = tf.maximum(to_prior, free_nats), tf.maximum(to_posterior, free_nats)
    to_prior, to_posterior = tf.reduce_mean(to_prior), tf.reduce_mean(to_posterior)
    loss = balance * tf.maximum(to_prior, free_nats) + (1 - balance) * tf.maximum(to_posterior, free_nats)
    return loss, tf.reduce_mean(categorical_kl(posterior_logits, prior_logits))


def frame_nll_per_channel(frame_outputs, frames, pixel_values):
    """Negative log-likelihood per frame and channel [C] (summed over cells, mean over frames) of
    uint8 `frames` [..., H, W, C]: Bernoulli with 2 pixel values, else a unit-variance Gaussian
    over pixels scaled to [-0.5, 0.5] (constant terms dropped)."""
    if pixel_values == 2:
        targets = tf.cast(pixel_classes(frames, 2), tf.float32)
        nll = tf.nn.sigmoid_cross_entropy_with_logits(labels=targets, logits=frame_outputs)
    else:
        nll = 0.5 * tf.square(frame_outputs - (tf.cast(frames, tf.float32) / 255.0 - 0.5))
    per_frame = tf.reduce_sum(nll, axis=[-3, -2])
    return tf.reduce_mean(tf.reshape(per_frame, [-1, per_frame.shape[-1]]), 0)


def frame_nll(frame_outputs, frames, pixel_values):
    """Negative log-likelihood per frame (summed over cells and channels, mean over frames) of uint8
    `frames` (frame_nll_per_channel's, summed); with pixel_values 0, of vector observations
    [..., D] under a unit-variance Gaussian."""
    if pixel_values == 0:
        return tf.reduce_mean(tf.reduce_sum(0.5 * tf.square(frame_outputs - tf.cast(frames, tf.float32)), -1))
    return tf.reduce_sum(frame_nll_per_channel(frame_outputs, frames, pixel_values))


def reward_detection(reward_means, rewards):
    """The reward head's predictions (its means rounded to -1, 0 or 1) against the real rewards:
    accuracy over all steps, and, since rewards are rare in most games and accuracy then says
    little, the share of rewarded steps whose reward it predicts and the share of the other steps
    where it predicts one that is not there; and, since a head unsure of a rare reward predicts
    less than half of it and rounds to none, its mean on rewarded steps, signed as their rewards
    (0 where it does not tell them apart, 1 where it predicts them whole)."""
    predicted = tf.clip_by_value(tf.round(reward_means), -1, 1)
    rewarded = tf.not_equal(rewards, 0.0)

    def count(mask):
        return tf.reduce_sum(tf.cast(mask, tf.float32))
    on_rewarded = tf.reduce_sum(tf.where(rewarded, reward_means * tf.sign(rewards), 0.0))
    return dict(reward_accuracy=tf.reduce_mean(tf.cast(tf.equal(predicted, rewards), tf.float32)),
                reward_recall=tf.math.divide_no_nan(count(rewarded & tf.equal(predicted, rewards)), count(rewarded)),
                reward_false_rate=tf.math.divide_no_nan(count(~rewarded & tf.not_equal(predicted, 0.0)),
                                                        count(~rewarded)),
                reward_on_rewarded=tf.math.divide_no_nan(on_rewarded, count(rewarded)))


def world_model_loss(frame_outputs, frames, reward_outputs, rewards, continue_logits, ends, posterior_logits,
                     prior_logits, pixel_values, kl_scale, kl_balance, free_nats, continue_scale,
                     free_nats_per_step=False, reward_head="gaussian"):
    """DreamerV2's world-model loss; returns (loss, {term: value}), with MinAtar's frame loss per
    channel too (which of its objects the model misses; Breakout's ball is channel 1).
    reward_outputs: the reward head's means ("gaussian": a unit-variance Gaussian, DreamerV2's)
    or its logits over two-hot bins ("twohot": DreamerV3's cross-entropy)."""
    per_channel = {}
    if pixel_values == 2:
        channels = frame_nll_per_channel(frame_outputs, frames, pixel_values)
        per_channel = {f"channel_{c}_image_loss": channels[c] for c in range(channels.shape[0])}
        image = tf.reduce_sum(channels)
    else:
        image = frame_nll(frame_outputs, frames, pixel_values)
    if reward_head == "twohot":
        reward = tf.reduce_mean(twohot_loss(reward_outputs, rewards, bins()))
    else:
        reward = tf.reduce_mean(0.5 * tf.square(reward_outputs - rewards))  # unit-variance Gaussian
    continues = 1.0 - tf.cast(ends, tf.float32)
    cont = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=continues, logits=continue_logits))
    kl_loss, kl = kl_balanced(posterior_logits, prior_logits, kl_balance, free_nats, free_nats_per_step)
    loss = image + reward + continue_scale * cont + kl_scale * kl_loss
    return loss, dict(image_loss=image, reward_loss=reward, continue_loss=cont, kl_loss=kl_loss, kl=kl, **per_channel)
