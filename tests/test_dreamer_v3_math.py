"""DreamerV3's new math (issue 67) on hand values: symlog and symexp, the two-hot encoding over
symlog bins and its read-out, the percentile return scale with its EMA, and free bits per step."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.models.rssm import categorical_kl, kl_balanced
from rlkit.models.twohot import bins, symexp, symlog, twohot, twohot_loss, twohot_mean
from rlkit.rl.learners.dreamer import quantile, return_scale


def test_symlog_and_symexp_invert_each_other_and_squash_large_values():
    x = tf.constant([-1000.0, -1.0, 0.0, 0.5, 1.0, 1e4])
    np.testing.assert_allclose(symlog(x).numpy(), np.sign(x) * np.log1p(np.abs(x)), rtol=1e-6)
    np.testing.assert_allclose(symexp(symlog(x)).numpy(), x.numpy(), rtol=1e-4)
    assert symlog(tf.constant(1.0)).numpy() == pytest.approx(np.log(2.0))
    assert symlog(tf.constant(1e4)).numpy() == pytest.approx(9.2104, abs=1e-3)


def test_twohot_weighs_the_two_bins_around_the_target_by_nearness():
    centres = tf.constant([-2.0, -1.0, 0.0, 1.0, 2.0])
    # symlog(e - 1) = 1: exactly on a bin, all weight there.
    np.testing.assert_allclose(twohot(tf.constant([np.e - 1]), centres).numpy(), [[0, 0, 0, 1, 0]], atol=1e-6)
    # symlog(x) = 0.25: 3/4 on bin 0.0, 1/4 on bin 1.0.
    x = np.expm1(0.25)
    np.testing.assert_allclose(twohot(tf.constant([x, -x]), centres).numpy(),
                               [[0, 0, 0.75, 0.25, 0], [0, 0.25, 0.75, 0, 0]], atol=1e-6)
    # Beyond the outer bins: all on the outer bin.
    np.testing.assert_allclose(twohot(tf.constant([1e6, -1e6]), centres).numpy(),
                               [[0, 0, 0, 0, 1], [1, 0, 0, 0, 0]], atol=1e-6)
    encoded = twohot(tf.constant([0.3, -7.0, 12.5]), bins())
    np.testing.assert_allclose(encoded.numpy().sum(-1), 1.0, rtol=1e-6)
    assert (np.count_nonzero(encoded.numpy(), -1) <= 2).all()


def test_the_read_out_of_a_two_hot_target_is_the_target_and_the_loss_is_its_cross_entropy():
    centres = bins()
    targets = tf.constant([-350.0, -1.0, 0.0, 0.7, 42.0])
    # Logits whose softmax is the two-hot encoding read out as the target itself (symexp of the
    # bins' mean is the target: the two weights interpolate symlog(x) linearly).
    logits = tf.math.log(twohot(targets, centres) + 1e-30)
    np.testing.assert_allclose(twohot_mean(logits, centres).numpy(), targets.numpy(), rtol=1e-4, atol=1e-4)
    uniform = tf.zeros([5, centres.shape[0]])
    np.testing.assert_allclose(twohot_loss(uniform, targets, centres).numpy(), np.log(255.0), rtol=1e-5)
    assert twohot_mean(uniform, centres).numpy() == pytest.approx(np.zeros(5), abs=1e-4)


def test_quantiles_are_numpys_and_the_return_scale_is_an_ema_floored_at_one():
    values = np.random.default_rng(0).normal(size=(15, 7)).astype(np.float32) * 30
    for q in (0.0, 0.05, 0.5, 0.95, 1.0):
        assert quantile(tf.constant(values), q).numpy() == pytest.approx(np.quantile(values, q), rel=1e-5)
    scale, low, high = return_scale(tf.constant(values), 0.0, 0.0, rate=0.01)
    assert low.numpy() == pytest.approx(0.01 * np.quantile(values, 0.05), rel=1e-5)
    assert high.numpy() == pytest.approx(0.01 * np.quantile(values, 0.95), rel=1e-5)
    assert scale.numpy() == pytest.approx(max(1.0, 0.01 * (np.quantile(values, 0.95) - np.quantile(values, 0.05))))
    # A range far above 1: the scale follows it; small returns are never scaled up.
    scale, _, _ = return_scale(tf.constant(values), -40.0, 60.0, rate=0.01)
    assert scale.numpy() == pytest.approx(0.99 * 100 + 0.01 * (np.quantile(values, 0.95) - np.quantile(values, 0.05)),
                                          rel=1e-5)
    scale, _, _ = return_scale(tf.constant(values) * 1e-3, 0.0, 0.1, rate=0.01)
    assert scale.numpy() == 1.0


def test_free_bits_per_step_floor_each_steps_kl_not_the_mean():
    """Step 0's KL is below 1 nat, step 1's above: per step, step 0 counts as 1 and gives no
    gradient; floored after the mean (DreamerV2), the mean is above 1 and both steps train."""
    post = tf.Variable([[[0.0, 0.1, 0.0]], [[0.0, 5.0, 0.0]]])  # 2 steps x 1 group x 3 classes
    prior = tf.Variable([[[0.0, 0.0, 0.0]], [[5.0, 0.0, 0.0]]])
    kls = categorical_kl(post, prior).numpy()
    assert kls[0] < 1.0 < kls[1] and kls.mean() > 1.0
    with tf.GradientTape(persistent=True) as tape:
        per_step, _ = kl_balanced(post, prior, balance=5 / 6, free_nats=1.0, free_nats_per_step=True)
        of_mean, _ = kl_balanced(post, prior, balance=5 / 6, free_nats=1.0)
    assert per_step.numpy() == pytest.approx((1.0 + kls[1]) / 2, rel=1e-5)
    assert of_mean.numpy() == pytest.approx(kls.mean(), rel=1e-5)
    assert not np.any(tape.gradient(per_step, prior).numpy()[0]) and np.any(tape.gradient(per_step, prior).numpy()[1])
    assert np.any(tape.gradient(of_mean, prior).numpy()[0])
