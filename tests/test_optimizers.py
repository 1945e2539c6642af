"""rlkit's Adam, FusedAdam (one ResourceApplyAdam kernel per variable), against Keras's own."""

import gin
import keras
import numpy as np
import tensorflow as tf

from rlkit.models.optimizers import FusedAdam, make_optimizer


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
