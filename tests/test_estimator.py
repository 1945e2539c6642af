import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlkit.errors import UserError
from rlkit.hparams import HParams
from rlkit.models.estimator import Estimator
from rlkit.models.registry import register_model


class LinearRegression(keras.Model):
    def __init__(self, units):
        super().__init__()
        self.dense = keras.layers.Dense(units)

    def call(self, x):
        return self.dense(x)

    def loss_and_metrics(self, features, step, training=False):
        prediction = tf.cast(self(features["x"]), tf.float32)  # float16 under mixed precision
        mse = tf.reduce_mean(tf.square(prediction - features["y"]))
        return mse, {"mse": mse}

    def infer(self, features):
        return {"y": self(features["x"])}


@register_model
def fake_linear_regression(hparams):
    return LinearRegression(hparams.units)


def hparams(units=1):
    # The Estimator's optimizer settings, as in every world-model set.
    return HParams(units=units, learning_rate=0.5, learning_rate_schedule="constant", learning_rate_warmup_steps=0,
                   clip_grad_norm=1.0)


def input_fn(seed=0, batches=None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(256, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3)
    dataset = tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(32)
    return dataset.take(batches) if batches else dataset.repeat()


def make(model_dir, units=1):
    return Estimator("fake_linear_regression", hparams(units), str(model_dir), save_checkpoints_steps=20,
                     save_summary_steps=10, keep_checkpoints=2)


def test_train_counts_steps_keeps_checkpoints_and_learns(tmp_path):
    estimator = make(tmp_path)
    assert estimator.train(input_fn, max_steps=60) == 60
    assert sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "ckpt-*.index"))) == \
        ["ckpt-40.index", "ckpt-60.index"]
    results = estimator.evaluate(lambda: input_fn(seed=1), steps=4)
    assert results["global_step"] == 60 and set(results) == {"mse", "loss", "global_step"}
    assert results["mse"] < 0.5, results
    events = EventAccumulator(str(tmp_path / "train"))
    events.Reload()
    assert [e.step for e in events.Tensors("losses/loss")] == [10, 20, 30, 40, 50, 60]
    assert "charts/steps_per_second" in events.Tags()["tensors"]
    evals = EventAccumulator(str(tmp_path / "eval"))
    evals.Reload()
    assert [e.step for e in evals.Tensors("charts/mse")] == [60]


def test_training_resumes_at_the_saved_global_step(tmp_path):
    make(tmp_path).train(input_fn, max_steps=40)
    resumed = make(tmp_path)
    assert resumed.train(input_fn, max_steps=40) == 40  # nothing left to do
    assert resumed.train(input_fn, max_steps=70) == 70
    assert int(tf.train.load_checkpoint(str(tmp_path)).get_tensor(
        "global_step/.ATTRIBUTES/VARIABLE_VALUE")) == 70


def test_checkpoint_round_trip_gives_identical_predictions(tmp_path):
    first = make(tmp_path)
    first.train(input_fn, max_steps=20)
    expected = list(first.predict(lambda: input_fn(seed=2, batches=3)))
    restored = list(make(tmp_path).predict(lambda: input_fn(seed=2, batches=3)))
    assert len(restored) == 3
    for a, b in zip(expected, restored):
        np.testing.assert_array_equal(a["y"], b["y"])


def test_restoring_into_another_shape_fails_clearly(tmp_path):
    make(tmp_path).train(input_fn, max_steps=20)
    wider = make(tmp_path, units=2)
    with pytest.raises(UserError, match="cannot restore checkpoint .*ckpt-20 into model 'fake_linear_regression'"):
        wider.evaluate(lambda: input_fn(batches=1), steps=1)


def test_counters_added_later_are_optional_in_older_checkpoints(tmp_path):
    """A run whose checkpoints predate a counter (say, trainer_model_free's evaluated_steps)
    resumes with the counter at its initial value; any other missing object still fails."""
    from rlkit.checkpoints import restore_latest
    steps = tf.Variable(7, dtype=tf.int64)
    old = tf.train.Checkpoint(steps=steps)
    manager = tf.train.CheckpointManager(old, str(tmp_path), max_to_keep=1)
    manager.save()
    restored_steps, evaluated = tf.Variable(0, dtype=tf.int64), tf.Variable(-1, dtype=tf.int64)
    new = tf.train.Checkpoint(steps=restored_steps, evaluated=evaluated)
    assert restore_latest(new, manager, "the learner", added_later=["evaluated"])
    assert (int(restored_steps), int(evaluated)) == (7, -1)
    with pytest.raises(UserError, match="cannot restore checkpoint .* into the learner"):
        restore_latest(new, manager, "the learner")


def test_mixed_precision_trains_with_float32_variables(tmp_path):
    estimator = Estimator("fake_linear_regression", hparams(), str(tmp_path), mixed_precision=True)
    assert estimator.train(input_fn, max_steps=5) == 5
    assert estimator.model.dense.compute_dtype == "float16"
    assert all(v.dtype == "float32" for v in estimator.model.trainable_variables)
    assert keras.config.dtype_policy().name == "float32"  # nothing else changed
