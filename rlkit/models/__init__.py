"""Networks and models, registered by name and chosen by hparams.

Importing this package registers every model rlkit ships.
"""

from rlkit.models import next_frame, next_frame_sd, policy_networks  # noqa: F401  (registers the models)
