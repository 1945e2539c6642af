"""DreamerV3's scalar heads (Hafner et al. 2023): rewards and values predicted as a categorical
over bins equally spaced in symlog space, trained with cross-entropy on a "two-hot" target.

    symlog(x) = sign(x) log(1 + |x|)        symexp(y) = sign(y) (exp(|y|) - 1)

A target x puts its weight on the two bins around symlog(x), each in proportion to how near
the other one is (all of it on one bin when symlog(x) is a bin or beyond the outer ones); the
prediction is symexp of the bins' mean under softmax(logits). Large and small rewards train at
one scale and the gradient does not grow with the target, which is what lets one set of
hyperparameters learn games whose rewards differ by orders of magnitude.
"""

import numpy as np
import tensorflow as tf

NUM_BINS, LOW, HIGH = 255, -20.0, 20.0  # DreamerV3's bins, in symlog space


def symlog(x):
    return tf.sign(x) * tf.math.log1p(tf.abs(x))


def symexp(y):
    return tf.sign(y) * tf.math.expm1(tf.abs(y))


def bins(num_bins=NUM_BINS, low=LOW, high=HIGH):
    """The bins' centres [num_bins] in symlog space."""
    return tf.constant(np.linspace(low, high, num_bins), tf.float32)


def twohot(targets, centres):
    """The two-hot encoding [..., K] of `targets` [...] (plain values) over `centres` [K] in symlog
    space: weights on the two bins around symlog(target), summing to 1."""
    x = symlog(tf.cast(targets, tf.float32))
    count = centres.shape[0]
    # below: the last bin at or below x; above: the first bin at or above x (both clipped inside).
    below = tf.clip_by_value(tf.reduce_sum(tf.cast(centres[None] <= x[..., None], tf.int32), -1) - 1, 0, count - 1)
    above = tf.clip_by_value(count - tf.reduce_sum(tf.cast(centres[None] > x[..., None], tf.int32), -1), 0, count - 1)
    equal = tf.equal(below, above)
    to_below = tf.where(equal, 1.0, tf.abs(tf.gather(centres, below) - x))
    to_above = tf.where(equal, 1.0, tf.abs(tf.gather(centres, above) - x))
    total = to_below + to_above
    return (tf.one_hot(below, count) * (to_above / total)[..., None]
            + tf.one_hot(above, count) * (to_below / total)[..., None])


def twohot_loss(logits, targets, centres):
    """Cross-entropy [...] of softmax(logits [..., K]) against the two-hot encoding of `targets`."""
    return -tf.reduce_sum(twohot(targets, centres) * tf.nn.log_softmax(logits), -1)


def twohot_mean(logits, centres):
    """The predicted value [...]: symexp of the bins' mean under softmax(logits)."""
    return symexp(tf.reduce_sum(tf.nn.softmax(logits) * centres, -1))


def nearest_value_probabilities(logits, centres, values):
    """[..., V] the mass softmax(logits [..., K]) puts on the bins nearest each of `values` (plain
    values; nearness in symlog space, where the bins are spaced): a reward head's probability of
    each reward a game gives, with the bins beyond the outer values counted to them."""
    nearest = tf.argmin(tf.abs(centres[:, None] - symlog(tf.constant(values, tf.float32))[None]), -1)
    return tf.nn.softmax(logits) @ tf.one_hot(nearest, len(values))
