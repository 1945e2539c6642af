import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import collect_random_pong
from rlkit.data_generators.frame_store import FrameStore
from rlkit.hparams import create_hparams
from rlkit.models.estimator import Estimator
from rlkit.models.next_frame_sd import bits_to_groups, groups_to_bits, linear_schedule
from rlkit.models.registry import get_model

TINY = "next_frame_basic_stochastic_discrete_tiny"


@pytest.fixture(scope="module")
def pong_windows(tmp_path_factory):
    """A batch of 2 windows (4 context + 2 target frames) of real Pong."""
    data_dir = str(tmp_path_factory.mktemp("pong") / "data")
    collect_random_pong(data_dir, 60)
    return next(iter(FrameStore(data_dir).window_dataset(4, 2, seed=0).skip(30).batch(2)))


def build(overrides=""):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(TINY, overrides)
    return get_model(hparams.model)(hparams, (105, 80, 3), 6), hparams


def test_bit_groups_round_trip():
    bits = tf.constant([[1, -1, -1, 1, 1, 1, -1, -1] * 2], tf.float32)
    groups = bits_to_groups(bits)
    assert groups.numpy().tolist() == [[1 + 8 + 16 + 32] * 2]
    np.testing.assert_array_equal(groups_to_bits(groups), bits)


def test_schedules_rise_linearly_then_hold():
    assert [float(linear_schedule(s, 20, 0.5)) for s in (0, 10, 20, 40)] == [0.0, 0.25, 0.5, 0.5]


def test_shapes_losses_and_straight_through_gradients(pong_windows):
    model, hparams = build()
    with tf.GradientTape() as tape:
        loss, metrics = model.loss_and_metrics(pong_windows, 0, training=True)
    assert {"pixel_loss", "reward_loss", "bit_loss", "pixel_accuracy", "reward_accuracy"} <= set(metrics)
    assert np.isfinite(float(loss))
    # The sign is straight-through: the pixel loss trains the inference network.
    gradient = tape.gradient(loss, model.posterior_bits.kernel)
    assert gradient is not None and float(tf.reduce_max(tf.abs(gradient))) > 0
    state = model.initial_state(2)
    assert state.shape == (2, 105, 80, hparams.recurrent_state_size)
    frames, rewards, state = model.next_frame(pong_windows["frames"][:, :4], pong_windows["actions"][:, 3], state)
    assert frames.shape == (2, 105, 80, 3) and frames.dtype == tf.uint8 and rewards.shape == (2,)
    assert state.shape == (2, 105, 80, hparams.recurrent_state_size)
    assert float(tf.reduce_max(tf.abs(state))) > 0  # the state carries something to the next step


def test_prior_samples_differ_at_temperature_and_repeat_with_a_seed(pong_windows):
    model, hparams = build()
    context = pong_windows["frames"][:, :4]
    first, second = model.sample_prior(context, 1.0), model.sample_prior(context, 1.0)
    assert first.shape == (2, hparams.bottleneck_bits)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(model.sample_prior(context, 0.0), model.sample_prior(context, 0.0))
    state = model.initial_state(2)
    model.rng.reset_from_seed(7)
    a = model.next_frame(context, pong_windows["actions"][:, 3], state, 1.0)
    model.rng.reset_from_seed(7)
    b = model.next_frame(context, pong_windows["actions"][:, 3], state, 1.0)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[2], b[2])
    # Different bits give different predictions.
    logits_a, _, _ = model.frame_model(context, pong_windows["actions"][:, 3], latent=first)
    logits_b, _, _ = model.frame_model(context, pong_windows["actions"][:, 3], latent=second)
    assert not np.allclose(logits_a, logits_b)


def test_trains_through_its_schedules(pong_windows, tmp_path):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(TINY)
    batch = lambda: tf.data.Dataset.from_tensors(pong_windows).repeat()  # noqa: E731
    estimator = Estimator(hparams.model, hparams, str(tmp_path), model_args=((105, 80, 3), 6), save_summary_steps=10)
    start = estimator.evaluate(batch, steps=1)
    estimator.train(batch, max_steps=30)
    end = estimator.evaluate(batch, steps=1)
    assert end["prior_mix"] == pytest.approx(0.5) and end["scheduled_sampling"] == pytest.approx(0.5)
    assert end["loss"] < start["loss"] and end["bit_loss"] < start["bit_loss"]
    resumed = Estimator(hparams.model, hparams, str(tmp_path), model_args=((105, 80, 3), 6))
    assert resumed.evaluate(batch, steps=1)["prior_mix"] == pytest.approx(0.5)  # the global step restored
