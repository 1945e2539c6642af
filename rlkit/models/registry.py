"""The model registry: builders registered under their function's name, chosen by hparams."""

from rlkit.registry import Registry

_MODELS = Registry("model")

register_model = _MODELS.register
get_model = _MODELS.get
