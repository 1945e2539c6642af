"""Optimizers, the component gin swaps: `make_optimizer.optimizer = @keras.optimizers.RMSprop`.

Learners call `make_optimizer` inside a gin scope named after themselves (`ppo`, a model's
name), so `ppo/make_optimizer.optimizer = ...` changes one learner and an unscoped binding
changes all. Learning rates come from hparams.
"""

import functools

import gin
import keras
import tensorflow as tf
from keras import ops


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


class LeanAdafactor(keras.optimizers.Adafactor):
    """Keras's Adafactor, the same arithmetic in a third fewer ops: Keras's update made 63 graph ops
    for each variable, a third of the graph of a MinAtar world model's training step (88
    variables) and two thirds of the tiny test model's, which every run traces and TensorFlow
    optimises at its start (42 now; docs/benchmarks.md, lever 11). Two things are not
    repeated per variable: the step's scalars (the decay, the 1/sqrt(step) cap), made once per
    step; and a factored weight's full-size second-moment slot `v`, which Keras rebuilds from the
    row and column statistics `r` and `c` every step before reading it, so storing it is never
    needed (it stays in the checkpoint, unread). Each weight's update is Keras's ops in Keras's
    order: the weights come out equal to Keras's bit for bit (tests/test_optimizers.py)."""

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        self._step_scalars = {}  # per dtype, made by the first variable of that dtype
        try:
            super()._backend_update_step(grads, trainable_variables, learning_rate)
        finally:
            self._step_scalars = None

    def _scalars(self, learning_rate, dtype):
        if dtype not in self._step_scalars:
            lr = ops.cast(learning_rate, dtype)
            local_step = ops.cast(self.iterations + 1, dtype)
            if not callable(self._learning_rate) and self.relative_step:
                lr = ops.minimum(lr, 1 / ops.sqrt(local_step))
            beta_2_t = ops.subtract(1, ops.power(local_step, self.beta_2_decay))
            self._step_scalars[dtype] = dict(
                rho_t=ops.minimum(lr, 1 / ops.sqrt(local_step)), beta_2_t=beta_2_t,
                one_minus_beta_2_t=ops.subtract(1, beta_2_t), epsilon_2=ops.cast(self.epsilon_2, dtype),
                one=ops.cast(1.0, dtype))
        return self._step_scalars[dtype]

    def update_step(self, gradient, variable, learning_rate):
        if getattr(self, "_step_scalars", None) is None:  # called outside apply(): Keras's own
            return super().update_step(gradient, variable, learning_rate)
        s = self._scalars(learning_rate, variable.dtype)
        index = self._get_variable_index(variable)
        gradient = ops.cast(gradient, variable.dtype)
        alpha_t = ops.maximum(s["epsilon_2"], self._rms(variable)) * s["rho_t"]
        regulated_grad_square = ops.add(ops.square(gradient), self.epsilon_1)
        if len(variable.shape) >= 2:
            r = ops.add(ops.multiply(s["beta_2_t"], self._r[index]),
                        ops.multiply(s["one_minus_beta_2_t"], ops.mean(regulated_grad_square, axis=-1)))
            c = ops.add(ops.multiply(s["beta_2_t"], self._c[index]),
                        ops.multiply(s["one_minus_beta_2_t"], ops.mean(regulated_grad_square, axis=-2)))
            self.assign(self._r[index], r)
            self.assign(self._c[index], c)
            v = ops.multiply(ops.expand_dims(ops.divide(r, ops.mean(r, axis=-1, keepdims=True)), axis=-1),
                             ops.expand_dims(c, -2))
        else:
            v = ops.add(ops.multiply(s["beta_2_t"], self._v[index]),
                        ops.multiply(s["one_minus_beta_2_t"], regulated_grad_square))
            self.assign(self._v[index], v)
        u_t = ops.divide(gradient, ops.sqrt(v))
        u_t_hat = ops.divide(u_t, ops.maximum(s["one"], ops.divide(self._rms(u_t), self.clip_threshold)))
        self.assign_sub(variable, ops.multiply(alpha_t, u_t_hat))


# Registered with gin so a run's operative_config.gin records the optimizer and its settings
# (learners make gin's wrapper of it); FusedAdam under Keras's name, so
# `@keras.optimizers.Adam` binds the one-kernel update.
Adam = gin.external_configurable(FusedAdam, name="Adam", module="keras.optimizers")
# LeanAdafactor likewise under Keras's Adafactor's name.
Adafactor = gin.external_configurable(LeanAdafactor, name="Adafactor", module="keras.optimizers")
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
    return make_optimizer(schedule, default=functools.partial(Adafactor, epsilon_1=1e-16),
                          global_clipnorm=hparams.clip_grad_norm)
