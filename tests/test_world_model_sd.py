import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import SMALL_PONG_FRAME, collect_random_pong
from rlkit.data_generators.frame_store import FrameStore
from rlkit.hparams import create_hparams
from rlkit.models.estimator import Estimator
from rlkit.models.next_frame_sd import (bits_to_groups, groups_to_bits, linear_rise,
                                       scheduled_sampling_probability)
from rlkit.models.registry import get_model

TINY = "next_frame_basic_stochastic_discrete_tiny"


@pytest.fixture(scope="module")
def pong_windows(tmp_path_factory):
    """A batch of 2 windows (4 context + 2 target frames) of real Pong."""
    data_dir = str(tmp_path_factory.mktemp("pong") / "data")
    collect_random_pong(data_dir, 60, frame_shape=SMALL_PONG_FRAME)
    return next(iter(FrameStore(data_dir).window_dataset(4, 2, seed=0).skip(30).batch(2)))


def build(overrides=""):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(TINY, overrides)
    return get_model(hparams.model)(hparams, SMALL_PONG_FRAME, 6), hparams


def test_bit_groups_round_trip():
    bits = tf.constant([[1, -1, -1, 1, 1, 1, -1, -1] * 2], tf.float32)
    groups = bits_to_groups(bits)
    assert groups.numpy().tolist() == [[1 + 8 + 16 + 32] * 2]
    np.testing.assert_array_equal(groups_to_bits(groups), bits)


def test_schedules_rise_as_the_originals():
    np.testing.assert_allclose([float(linear_rise(s, 40000)) for s in (0, 20000, 40000, 80000)],
                               [0.01, 0.505, 1.0, 1.0], rtol=1e-6)
    # Scheduled sampling reaches 1.0 (all own predictions) at 40K steps, and is very low early.
    probability = [float(scheduled_sampling_probability(s, 40000, 1.0)) for s in (0, 5000, 20000, 40000, 60000)]
    assert probability[0] < 1e-3 and probability[1] < 0.02
    assert 0.3 < probability[2] < 0.6 and probability[3] == pytest.approx(1.0) and probability[4] == pytest.approx(1.0)


def posterior_gradient(model, windows, step):
    with tf.GradientTape() as tape:
        loss, metrics = model.loss_and_metrics(windows, step, training=True)
    assert {"pixel_loss", "reward_loss", "bit_loss", "pixel_accuracy", "reward_accuracy"} <= set(metrics)
    assert np.isfinite(float(loss))
    return float(tf.reduce_max(tf.abs(tape.gradient(loss, model.posterior_bits.kernel))))


def test_shapes_losses_and_straight_through_gradients(pong_windows):
    # After the warm-up every example uses the posterior's bits (no prior bits here).
    model, hparams = build("latent_use_max_probability=1.0,latent_rnn_max_sampling=0.0")
    # The sign is straight-through: the pixel loss trains the inference network...
    assert posterior_gradient(model, pong_windows, 10**6) > 0
    # ...but at step 0 (1% x 1.0 of examples use the latent) these 2 examples skip the latent.
    assert posterior_gradient(model, pong_windows, 0) == 0
    state = model.initial_state(2)
    assert state.shape == (2, *SMALL_PONG_FRAME[:2], hparams.recurrent_state_size)
    frames, rewards, state = model.next_frame(pong_windows["frames"][:, :4], pong_windows["actions"][:, 3], state)
    assert frames.shape == (2, *SMALL_PONG_FRAME) and frames.dtype == tf.uint8 and rewards.shape == (2,)
    assert state.shape == (2, *SMALL_PONG_FRAME[:2], hparams.recurrent_state_size)
    assert float(tf.reduce_max(tf.abs(state))) > 0  # the state carries something to the next step


def bottleneck_of(model, windows):
    """The frame model's bottleneck (action injected) for the windows' context: what the prior sees."""
    seen = []
    model.frame_model(windows["frames"][:, :4], windows["actions"][:, 3],
                      inject_latent=lambda bottleneck: seen.append(bottleneck) or bottleneck)
    return seen[0]


def test_prior_samples_differ_at_temperature_and_repeat_with_a_seed(pong_windows):
    model, hparams = build()
    context = pong_windows["frames"][:, :4]
    bottleneck = bottleneck_of(model, pong_windows)
    first, second = model.sample_prior(bottleneck, 1.0), model.sample_prior(bottleneck, 1.0)
    assert first.shape == (2, hparams.bottleneck_bits)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(model.sample_prior(bottleneck, 0.0), model.sample_prior(bottleneck, 0.0))
    state = model.initial_state(2)
    model.rng.reset_from_seed(7)
    a = model.next_frame(context, pong_windows["actions"][:, 3], state, 1.0)
    model.rng.reset_from_seed(7)
    b = model.next_frame(context, pong_windows["actions"][:, 3], state, 1.0)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[2], b[2])
    # Different bits give different predictions.
    logits_a, _, _, _ = model.frame_model(context, pong_windows["actions"][:, 3], inject_latent=lambda b: model.add_bits(b, first))
    logits_b, _, _, _ = model.frame_model(context, pong_windows["actions"][:, 3], inject_latent=lambda b: model.add_bits(b, second))
    assert not np.allclose(logits_a, logits_b)


def test_trains_through_its_schedules(pong_windows, tmp_path):
    keras.utils.set_random_seed(0)
    hparams = create_hparams(TINY)
    batch = lambda: tf.data.Dataset.from_tensors(pong_windows).repeat()  # noqa: E731
    estimator = Estimator(hparams.model, hparams, str(tmp_path), model_args=(SMALL_PONG_FRAME, 6), save_summary_steps=10)
    start = estimator.evaluate(batch, steps=1)
    estimator.train(batch, max_steps=20)  # the tiny set's schedules end at step 20
    end = estimator.evaluate(batch, steps=1)
    assert end["prior_share"] == pytest.approx(0.5) and end["scheduled_sampling"] == pytest.approx(1.0)
    assert end["loss"] < start["loss"] and end["bit_loss"] < start["bit_loss"]
    resumed = Estimator(hparams.model, hparams, str(tmp_path), model_args=(SMALL_PONG_FRAME, 6))
    assert resumed.evaluate(batch, steps=1)["prior_share"] == pytest.approx(0.5)  # the global step restored
