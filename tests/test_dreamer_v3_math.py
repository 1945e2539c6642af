"""DreamerV3's new math (issue 67) on hand values: symlog and symexp, the two-hot encoding over
symlog bins and its read-out, the percentile return scale with its EMA, free bits per step and
the imagined continuation as the continue head's mode; and a seeded learning check of the whole
agent on synthetic windows."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.hparams import create_hparams
from rlkit.models.rssm_losses import categorical_kl, kl_balanced
from rlkit.models.twohot import bins, nearest_value_probabilities, symexp, symlog, twohot, twohot_loss, twohot_mean
from rlkit.rl.learners.dreamer import DreamerAgent, imagined_discounts, quantile, return_scale, trajectory_weights


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


def test_a_two_hot_reward_heads_probabilities_of_minus_one_zero_and_one_are_its_bins_masses():
    centres = tf.constant([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0])  # symlog(+-1) = +-0.69
    values = [-1.0, 0.0, 1.0]
    # Nearest in symlog space: -2, -1, -0.5 -> -1; 0, 0.25 -> 0; 0.5, 1 -> 1.
    mass = np.array([[0.1, 0.1, 0.1, 0.3, 0.2, 0.1, 0.1]])
    np.testing.assert_allclose(nearest_value_probabilities(tf.math.log(tf.constant(mass, tf.float32)), centres,
                                                           values).numpy(), [[0.3, 0.5, 0.2]], rtol=1e-5)
    # DreamerV3's bins: a target of 1 (or of 3, beyond) reads as reward 1; uniform logits give each
    # value its share of the 255 bins (all beyond +-0.35 in symlog space count to +-1).
    logits = tf.math.log(twohot(tf.constant([1.0, 3.0, 0.0, -1.0]), bins()) + 1e-30)
    np.testing.assert_allclose(nearest_value_probabilities(logits, bins(), values).numpy(),
                               np.eye(3)[[2, 2, 1, 0]], atol=1e-6)
    uniform = nearest_value_probabilities(tf.zeros([1, 255]), bins(), values).numpy()[0]
    middle = np.sum(np.abs(np.linspace(-20, 20, 255)) < np.log(2) / 2)
    np.testing.assert_allclose(uniform, [(255 - middle) / 2 / 255, middle / 255, (255 - middle) / 2 / 255], rtol=1e-5)


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


def test_an_imagined_step_continues_by_the_heads_mode_in_v3_and_by_its_probability_in_v2():
    logits = tf.constant([[2.0, -0.5], [0.1, 3.0], [-4.0, 0.0]])  # [H 3, B 2]
    gamma = 0.99
    mode = imagined_discounts(logits, gamma, "mode").numpy()
    np.testing.assert_allclose(mode, gamma * np.array([[1, 0], [1, 1], [0, 0]]), rtol=1e-6)  # p = 0.5: not more likely
    np.testing.assert_allclose(imagined_discounts(logits, gamma, "mean").numpy(),
                               gamma / (1 + np.exp(-logits.numpy())), rtol=1e-6)
    # DreamerV3's weights, cumprod(discount x cont) / discount with the start's cont 1: an
    # imagined episode counts fully, discounted, until the head says it ends, then not at all.
    np.testing.assert_allclose(trajectory_weights(tf.constant(mode)).numpy(),
                               [[1, 1], [gamma, 0], [gamma ** 2, 0]], rtol=1e-6)


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


def paid_action_windows(seed, length, batch=16, actions=3):
    """Windows of 10x10x4 frames in which action 0 is paid 1 and the others 0; each frame shows
    the last action (a cell in channel 0), so the world model can tell where it is."""
    rng = np.random.default_rng(seed)
    taken = rng.integers(actions, size=(batch, length))
    frames = np.zeros((batch, length, 10, 10, 4), np.uint8)
    frames[np.arange(batch)[:, None], np.arange(1, length)[None], 0, taken[:, :-1], 0] = 255
    return dict(frames=tf.constant(frames), actions=tf.constant(taken, tf.int32),
                rewards=tf.constant((taken == 0).astype(np.int32)), ends=tf.zeros((batch, length), tf.int32))


def test_dreamer_v3_learns_which_action_pays_and_its_actor_takes_it():
    """dreamer_v3_tiny's agent (two-hot reward and critic heads, return normalisation, unimix, free
    bits) trained on windows where action 0 is paid: the reward head tells the actions apart and
    the actor, trained in imagination, comes to prefer action 0. Learning rates raised for a
    quick check (the set's are the paper's); the actor's 30x below the world model's (the paper's
    is 3x: 3e-5 against 1e-4), since an actor as fast as its world model settles on an action
    before the reward head can tell them apart (docs/dreamer.md). 800 updates, about 40 s."""
    tf.keras.utils.set_random_seed(0)
    hparams = create_hparams("dreamer_v3_tiny", "world_model.learning_rate=3e-3,actor_critic.actor_learning_rate=1e-4,"
                                                "actor_critic.critic_learning_rate=1e-3")
    agent = DreamerAgent(hparams.actor_critic, hparams.world_model, (10, 10, 4), gym.spaces.Discrete(3), 2, seed=0)
    length = hparams.world_model.num_context_frames + hparams.world_model.num_target_frames
    for step in range(800):
        agent.update(paid_action_windows(step, length))

    held_out = paid_action_windows(10_000, length)
    states = agent.world_model.observe(held_out["frames"], held_out["actions"])
    flat = (tf.reshape(states["h"], [16 * length, -1]), tf.reshape(states["z"], [16 * length, *states["z"].shape[2:]]))
    rewards = [float(tf.reduce_mean(agent.world_model.heads(agent.world_model.features(
        agent.world_model.prior_step(flat, tf.fill([16 * length], action))[0]))[0])) for action in range(3)]
    assert rewards[0] > 0.9 and max(rewards[1:]) < 0.1, rewards
    preferences = tf.reduce_mean(tf.nn.softmax(agent.actor(agent.world_model.features(flat))), 0).numpy()
    assert preferences[0] > 0.5 and preferences.argmax() == 0, preferences
