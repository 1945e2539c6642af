"""Optimizers, the component gin swaps: `make_optimizer.optimizer = @keras.optimizers.RMSprop`.

Learners call `make_optimizer` inside a gin scope named after themselves (`ppo`, a model's
name), so `ppo/make_optimizer.optimizer = ...` changes one learner and an unscoped binding
changes all. Learning rates come from hparams.
"""

import functools

import gin
import keras
import tensorflow as tf


class FusedAdam(keras.optimizers.Adam):
    """Keras's Adam with each variable's update as one kernel, TensorFlow's ResourceApplyAdam, in
    place of Keras's ten elementwise ops per variable: the same formula, slots and checkpoint
    (results within a float rounding of Keras's: tests/test_optimizers.py), at 1.6-1.7x
    the speed over Dreamer's 45 variables (docs/benchmarks.md). Sparse gradients and AMSGrad
    take Keras's own path."""

    def update_step(self, gradient, variable, learning_rate):
        if self.amsgrad or isinstance(gradient, tf.IndexedSlices):
            return super().update_step(gradient, variable, learning_rate)
        index, dtype = self._get_variable_index(variable), variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self._momentums[index].value.handle, v=self._velocities[index].value.handle,
            beta1_power=tf.pow(beta_1, step), beta2_power=tf.pow(beta_2, step), lr=tf.cast(learning_rate, dtype),
            beta1=beta_1, beta2=beta_2, epsilon=tf.cast(self.epsilon, dtype), grad=tf.cast(gradient, dtype))


# Registered with gin so a run's operative_config.gin records the optimizer and its settings
# (learners make gin's wrapper of it); FusedAdam under Keras's name, so
# `@keras.optimizers.Adam` binds the one-kernel update.
Adam = gin.external_configurable(FusedAdam, name="Adam", module="keras.optimizers")
gin.external_configurable(keras.optimizers.Adafactor, module="keras.optimizers")
gin.external_configurable(keras.optimizers.AdamW, module="keras.optimizers")
gin.external_configurable(keras.optimizers.RMSprop, module="keras.optimizers")
gin.external_configurable(keras.optimizers.SGD, module="keras.optimizers")


@gin.configurable(allowlist=["optimizer"])
def make_optimizer(learning_rate, default=Adam, optimizer=None, **settings):
    """`optimizer` when gin binds one, else the learner's `default`, at `learning_rate` (a
    number or a schedule), with the learner's other `settings` (such as global_clipnorm)."""
    return (optimizer or default)(learning_rate=learning_rate, **settings)


SCHEDULES = ("constant", "linear_warmup", "linear_warmup_rsqrt_decay")


class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """tensor2tensor's learning-rate schedules: `constant` x min(1, step / warmup_steps), and
    with rsqrt decay also x 1 / sqrt(max(step, warmup_steps))."""

    def __init__(self, constant, warmup_steps, schedule):
        assert schedule in SCHEDULES, schedule
        self.constant, self.warmup_steps, self.schedule = float(constant), int(warmup_steps), schedule

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        rate = keras.ops.convert_to_tensor(self.constant)
        if self.schedule == "constant":
            return rate
        rate = rate * keras.ops.minimum(1.0, (step + 1.0) / max(self.warmup_steps, 1))
        if self.schedule == "linear_warmup_rsqrt_decay":
            rate = rate * keras.ops.rsqrt(keras.ops.maximum(step, float(max(self.warmup_steps, 1))))
        return rate

    def get_config(self):
        return dict(constant=self.constant, warmup_steps=self.warmup_steps, schedule=self.schedule)


def world_model_optimizer(hparams):
    """SimPLe's world-model optimizer: Adafactor (no momentum, each update scaled by its
    weight's RMS) on the set's warmup schedule, gradients clipped to `clip_grad_norm`.

    Keras's Adafactor also caps the step at 1/sqrt(step), which the rsqrt-decay schedule at
    learning_rate 1.5 exceeds (see the README). Its epsilon_1 is raised from 1e-30 to 1e-16:
    Keras multiplies the row and column statistics, and for a weight block whose gradient is
    all zero (the conv-GRU's state weights at the first step) 1e-30 x 1e-30 underflows float32
    and the update is 0/0."""
    schedule = WarmupSchedule(hparams.learning_rate, hparams.learning_rate_warmup_steps,
                              hparams.learning_rate_schedule)
    return make_optimizer(schedule, default=functools.partial(keras.optimizers.Adafactor, epsilon_1=1e-16),
                          global_clipnorm=hparams.clip_grad_norm)
