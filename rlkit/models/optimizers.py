"""Optimizers, the component gin swaps: `make_optimizer.optimizer = @keras.optimizers.RMSprop`.

Learners call `make_optimizer` inside a gin scope named after themselves (`ppo`, a model's
name), so `ppo/make_optimizer.optimizer = ...` changes one learner and an unscoped binding
changes all. Learning rates come from hparams.
"""

import gin
import keras

# Registered with gin so a run's operative_config.gin records the optimizer and its settings.
Adam = gin.external_configurable(keras.optimizers.Adam, module="keras.optimizers")
gin.external_configurable(keras.optimizers.Adafactor, module="keras.optimizers")
gin.external_configurable(keras.optimizers.AdamW, module="keras.optimizers")
gin.external_configurable(keras.optimizers.RMSprop, module="keras.optimizers")
gin.external_configurable(keras.optimizers.SGD, module="keras.optimizers")


@gin.configurable(allowlist=["optimizer"])
def make_optimizer(learning_rate, default=Adam, optimizer=None):
    """`optimizer` when gin binds one, else the learner's `default`, at `learning_rate`."""
    return (optimizer or default)(learning_rate=learning_rate)
