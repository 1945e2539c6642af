"""An Estimator-style training layer on Keras 3, in place of the removed tf.estimator.

A model is a `keras.Model` registered with `@register_model` whose builder takes hparams (and
`model_args`, such as a world model's frame shape and action count), and which defines

    loss_and_metrics(features, step, training) -> (loss, metrics)  # scalar, dict of scalars
    infer(features) -> dict of predictions

`Estimator(model_name, hparams, model_dir)` trains it with `train(input_fn, max_steps)`,
resuming from the newest checkpoint in model_dir and counting a global step; `evaluate`
returns averaged metrics and writes them to TensorBoard; `predict` yields predictions.
`input_fn()` returns a `tf.data.Dataset` of feature dicts. Under mixed precision a model
computes in float16 and casts to float32 for its losses. The optimizer is the model's
`make_optimizer()` where it defines one (DreamerV2's Adam), else SimPLe's for world models
(`optimizers.world_model_optimizer`): Adafactor on the hparams' learning_rate,
learning_rate_schedule and learning_rate_warmup_steps, clipped to clip_grad_norm.

TensorBoard tags follow rlkit's vocabulary: `losses/NAME` for metrics named *loss,
`charts/NAME` for the others and `charts/steps_per_second`.
"""

import itertools
import os
import time

import gin
import keras
import numpy as np
import tensorflow as tf
from absl import logging

from rlkit import checkpoints
from rlkit.models.optimizers import world_model_optimizer
from rlkit.models.registry import get_model
from rlkit.progress import Progress
from rlkit.summaries import write_summaries


class Estimator:
    """Trains, evaluates and runs one registered model in `model_dir`."""

    def __init__(self, model_name, hparams, model_dir, model_args=(), save_checkpoints_steps=1000,
                 save_summary_steps=100, keep_checkpoints=5, mixed_precision=False):
        self.model_name = model_name
        self.hparams = hparams
        self.model_dir = model_dir
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_summary_steps = save_summary_steps
        self.model = self._build_model(model_name, hparams, model_args, mixed_precision)
        with gin.config_scope(model_name):  # the model's own optimizer where it has one (DreamerV2's Adam)
            optimizer = (self.model.make_optimizer() if hasattr(self.model, "make_optimizer")
                         else world_model_optimizer(hparams))
        self.optimizer = keras.optimizers.LossScaleOptimizer(optimizer) if mixed_precision else optimizer
        self.global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        self._checkpoint = checkpoints.RunCheckpoint(model_dir, keep_checkpoints, f"model {model_name!r}",
                                                     model=self.model, optimizer=self.optimizer,
                                                     global_step=self.global_step)
        self._restored = False
        self._writers = {}

    @staticmethod
    def _build_model(model_name, hparams, model_args, mixed_precision):
        """The registered model; with mixed precision (for GPUs) its layers compute in float16
        and keep float32 variables. The global dtype policy is left as it was."""
        previous = keras.config.dtype_policy()
        if mixed_precision:
            keras.config.set_dtype_policy("mixed_float16")
        try:
            return get_model(model_name)(hparams, *model_args)
        finally:
            keras.config.set_dtype_policy(previous)

    def _writer(self, name):
        if name not in self._writers:
            self._writers[name] = tf.summary.create_file_writer(os.path.join(self.model_dir, name))
        return self._writers[name]

    def _build_and_restore(self, features):
        """Creates the variables from one batch, then loads the newest checkpoint if there is one."""
        if self._restored:
            return True
        self.model.loss_and_metrics(features, self.global_step, training=False)
        self.optimizer.build(self.model.trainable_variables)
        self._restored = True
        restored = self._checkpoint.restore()
        if restored:
            logging.info("Restored %s at global step %d", restored, int(self.global_step))
            return True
        return False

    def restore(self, example_features):
        """Builds the model from one example batch and loads the newest checkpoint; returns
        whether there was one (for inference outside `train`, `evaluate` and `predict`)."""
        return self._build_and_restore(example_features)

    @tf.function(reduce_retracing=True, autograph=False)
    def _train_step(self, features):
        with tf.GradientTape() as tape:
            loss, metrics = self.model.loss_and_metrics(features, self.global_step, training=True)
            scaled_loss = self.optimizer.scale_loss(loss)
        variables = self.model.trainable_variables
        gradients = tape.gradient(scaled_loss, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
        self.global_step.assign_add(1)
        return dict(metrics, loss=loss)

    @tf.function(reduce_retracing=True, autograph=False)
    def _eval_step(self, features):
        loss, metrics = self.model.loss_and_metrics(features, self.global_step, training=False)
        return dict(metrics, loss=loss)

    def train(self, input_fn, max_steps, after_checkpoint=None):
        """Trains until the global step reaches `max_steps`; returns the final global step.

        `after_checkpoint(step)`, if given, runs after each checkpoint is saved (for summaries
        that cost too much to write more often, such as dream rollouts).
        """
        dataset = iter(input_fn())
        first = next(dataset)
        self._build_and_restore(first)
        dataset = itertools.chain([first], dataset)
        progress = Progress(max_steps, int(self.global_step), unit="steps")
        window, start = [], time.monotonic()
        while int(self.global_step) < max_steps:
            metrics = self._train_step(next(dataset))
            window.append(metrics)
            step = int(self.global_step)
            if step % self.save_summary_steps == 0 or step == max_steps:
                means = {name: float(np.mean([m[name] for m in window])) for name in window[0]}
                means["steps_per_second"] = len(window) / (time.monotonic() - start)
                self.write_summaries("train", step, means)
                logging.info(progress.line(step, loss=means["loss"]))
                window, start = [], time.monotonic()
            if step % self.save_checkpoints_steps == 0 or step == max_steps:
                self._checkpoint.save(step)
                if after_checkpoint is not None:
                    after_checkpoint(step)
        return int(self.global_step)

    def evaluate(self, input_fn, steps):
        """Mean of each metric over `steps` batches, written to model_dir/eval at the global step."""
        dataset = iter(input_fn())
        first = next(dataset)
        self._build_and_restore(first)
        batches = [first] + [next(dataset) for _ in range(steps - 1)]
        history = [self._eval_step(features) for features in batches]
        results = {name: float(np.mean([m[name] for m in history])) for name in history[0]}
        self.write_summaries("eval", int(self.global_step), results)
        return dict(results, global_step=int(self.global_step))

    def predict(self, input_fn):
        """Yields the model's predictions for each batch, as numpy dicts."""
        for features in input_fn():
            self._build_and_restore(features)
            yield {name: value.numpy() for name, value in self.model.infer(features).items()}

    def write_summaries(self, name, step, scalars, images=None):
        """Scalars (tagged losses/ or charts/) and optional uint8 image batches (tagged images/)
        under model_dir/name at `step`."""
        scalars = {f"losses/{k}" if k.endswith("loss") else f"charts/{k}": v for k, v in scalars.items()}
        images = {f"images/{k}": v for k, v in (images or {}).items()}
        write_summaries(self._writer(name), step, scalars, images)
