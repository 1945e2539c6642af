"""The model registry: builders registered under their function's name, chosen by hparams."""

from rlkit.errors import UserError
from rlkit.hparams.hparam import did_you_mean

_MODELS = {}


def register_model(fn):
    """Registers a model builder under its name. Duplicate names are an error."""
    name = fn.__name__
    if name in _MODELS:
        raise ValueError(f"model {name!r} is already registered")
    _MODELS[name] = fn
    return fn


def list_models():
    return sorted(_MODELS)


def get_model(name):
    """The builder registered as `name`."""
    if name not in _MODELS:
        raise UserError(f"unknown model {name!r}{did_you_mean(name, _MODELS)} "
                        f"(registered: {', '.join(list_models())})")
    return _MODELS[name]
