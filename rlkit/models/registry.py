"""The model registry: builders registered under their function's name, chosen by hparams."""

from rlkit.registry import Registry

_MODELS = Registry("model", modules=("rlkit.models.next_frame", "rlkit.models.next_frame_sd",
                                     "rlkit.models.policy_networks", "rlkit.models.rssm"))

register_model = _MODELS.register
get_model = _MODELS.get
