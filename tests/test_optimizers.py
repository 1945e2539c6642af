"""rlkit's optimizers against Keras's own: Adam as FusedAdam (one ResourceApplyAdam kernel per
variable), Adafactor as LeanAdafactor (its scalars once per step, not per variable)."""

import gin
import keras
import numpy as np
import pytest
import tensorflow as tf

from rlkit.models.optimizers import FusedAdam, LeanAdafactor, WarmupSchedule, make_optimizer, world_model_optimizer
from rlkit.hparams import create_hparams


def trained(optimizer_class, steps=25, sparse=False):
    """Weights, and the optimizer, after `steps` updates of a small model on fixed random data."""
    keras.utils.set_random_seed(0)
    embedding = keras.layers.Embedding(20, 8)
    dense = keras.layers.Dense(3)
    model = keras.Sequential([keras.Input((4,), dtype="int32"), embedding, keras.layers.Flatten(), dense])
    rng = np.random.default_rng(0)
    inputs, targets = rng.integers(20, size=(32, 4)), rng.normal(size=(32, 3)).astype(np.float32)
    optimizer = optimizer_class(learning_rate=3e-3, epsilon=1e-5, global_clipnorm=0.5)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(inputs) - targets))
        gradients = tape.gradient(loss, model.trainable_variables)
        if not sparse:
            gradients = [tf.convert_to_tensor(g) for g in gradients]
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))

    for _ in range(steps):
        step()
    return [v.numpy() for v in model.trainable_variables], optimizer


def test_rlkits_adam_takes_keras_adams_steps_within_float_rounding(tmp_path):
    ours, our_optimizer = trained(FusedAdam)
    theirs, their_optimizer = trained(keras.optimizers.Adam)
    for a, b in zip(ours, theirs):
        assert np.max(np.abs(a)) > 0.01
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # The same slots, so a checkpoint of one restores into the other.
    path = tf.train.Checkpoint(optimizer=our_optimizer).save(str(tmp_path / "ours"))
    tf.train.Checkpoint(optimizer=their_optimizer).restore(path).assert_consumed()
    for a, b in zip(our_optimizer.variables, their_optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_sparse_gradients_take_keras_adams_path():
    ours, _ = trained(FusedAdam, steps=5, sparse=True)
    theirs, _ = trained(keras.optimizers.Adam, steps=5, sparse=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_rlkits_adam_is_the_default_and_what_gin_binds_as_keras_adam():
    assert isinstance(make_optimizer(1e-3), FusedAdam)
    with gin.unlock_config():
        gin.parse_config("make_optimizer.optimizer = @keras.optimizers.Adam")
    try:
        assert type(make_optimizer(1e-3, default=keras.optimizers.SGD)) is FusedAdam
    finally:
        gin.clear_config()


def adafactor_trained(optimizer_class, learning_rate, steps=25):
    """Weights and the optimizer after `steps` Adafactor updates of a small convolutional model
    (kernels of rank 4 and 2, factored; biases and a layer norm's scales, not)."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((6, 6, 3)), keras.layers.Conv2D(4, 3, padding="same"),
                              keras.layers.LayerNormalization(), keras.layers.Flatten(), keras.layers.Dense(5)])
    rng = np.random.default_rng(0)
    inputs, targets = rng.normal(size=(8, 6, 6, 3)).astype(np.float32), rng.normal(size=(8, 5)).astype(np.float32)
    optimizer = optimizer_class(learning_rate=learning_rate, epsilon_1=1e-16, global_clipnorm=1.0)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(inputs) - targets))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    for _ in range(steps):
        step()
    return [v.numpy() for v in model.trainable_variables], optimizer


@pytest.mark.parametrize("learning_rate", [WarmupSchedule(1.5, 10, "linear_warmup_rsqrt_decay"), 0.05],
                         ids=["a schedule above the 1/sqrt(step) cap", "constant"])
def test_rlkits_adafactor_takes_keras_adafactors_steps_bit_for_bit(learning_rate, tmp_path):
    ours, our_optimizer = adafactor_trained(LeanAdafactor, learning_rate)
    theirs, their_optimizer = adafactor_trained(keras.optimizers.Adafactor, learning_rate)
    initial, _ = adafactor_trained(keras.optimizers.Adafactor, learning_rate, steps=0)
    for a, b, start in zip(ours, theirs, initial):
        assert not np.array_equal(a, start)
        np.testing.assert_array_equal(a, b)
    for ours_r, theirs_r in zip(our_optimizer._r + our_optimizer._c, their_optimizer._r + their_optimizer._c):
        np.testing.assert_array_equal(np.asarray(ours_r), np.asarray(theirs_r))
    # The same slots, so a checkpoint of either restores into the other (a run of either resumes).
    for saved, restored in [(our_optimizer, their_optimizer), (their_optimizer, our_optimizer)]:
        path = tf.train.Checkpoint(optimizer=saved).save(str(tmp_path / type(saved).__name__))
        tf.train.Checkpoint(optimizer=restored).restore(path).assert_consumed()


def test_the_world_models_optimizer_is_rlkits_adafactor():
    assert type(world_model_optimizer(create_hparams("next_frame_basic_stochastic_discrete"))) is LeanAdafactor
