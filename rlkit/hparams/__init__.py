"""Hyperparameters: `HParams` and the registry of named sets.

Importing this package registers every set rlkit ships, and the ranged sets searches draw from.
"""

from rlkit.hparams.checks import dev_version
from rlkit.hparams.hparam import HParams
from rlkit.hparams.registry import (apply_overrides, create_hparams, describe_hparams, get_hparams, list_hparams,
                                    register_hparams, with_keys_added_later)
from rlkit.hparams.ranges import check_ranges, describe_ranges, get_ranges, list_ranges, register_ranged_hparams
from rlkit.hparams import (dqn_sets, dreamer_sets, dreamer_v3_sets, env_sets, pg_sets, ppo_sets,  # noqa: F401
                          ranged_sets, rlmb_sets, rlmf_off_policy_sets, rlmf_sets,
                          world_model_sets)  # (registers the sets)

__all__ = ["HParams", "apply_overrides", "check_ranges", "create_hparams", "describe_hparams", "describe_ranges", "dev_version",
           "get_hparams", "get_ranges", "list_hparams", "list_ranges", "register_hparams", "register_ranged_hparams",
           "with_keys_added_later"]
