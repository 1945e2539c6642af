"""Ranged hparam sets: registered like sets, held to the set a search runs over, no Ray needed."""

import pytest

from rlkit.errors import UserError
from rlkit.hparams import HParams, check_ranges, create_hparams, get_ranges, list_ranges
from rlkit.hparams.ranges import RangedHParams, trial_overrides

# Each shipped ranged set and the sets it is meant for.
FITS = {"ppo_learning": ["rlmf_minatar"], "simple_loop": ["rlmb_minatar"], "a2c_learning": ["rlmf_a2c_cartpole"],
        "dqn_learning": ["rlmf_dqn_cartpole", "rlmf_dqn_minatar_data_efficient"],
        "dreamer_learning": ["dreamer_v2_minatar", "dreamer_v3_minatar", "dreamer_v3_atari"]}


def test_every_shipped_ranged_set_fits_its_sets():
    assert sorted(FITS) == list_ranges()
    for ranges_name, set_names in FITS.items():
        for set_name in set_names:
            check_ranges(get_ranges(ranges_name), create_hparams(set_name), ranges_name)


def ranges_of(**calls):
    ranges = RangedHParams()
    for method, args in calls.items():
        getattr(ranges, method.rstrip("_0123456789"))(*args)
    return ranges


@pytest.mark.parametrize("ranges, message", [
    (ranges_of(set_float=("ppo.learnin_rate", 1e-5, 1e-3)), "unknown hparam 'ppo.learnin_rate'; did you mean "
                                                           "'ppo.learning_rate'"),
    (ranges_of(set_float=("ppo.rollout_length", 8, 64)), "not a float"),
    (ranges_of(set_int=("ppo.learning_rate", 1, 3)), "not an int"),
    (ranges_of(set_discrete=("ppo.num_minibatches", [4, 0])), "hparam 'ppo.num_minibatches' = 0: must be an integer"),
    (ranges_of(set_categorical=("ppo.policy_network", [3])), "expects a str"),
    (ranges_of(set_float=("ppo.gamma", 0.9, 1.5)), "hparam 'ppo.gamma' = 1.5"),
    (ranges_of(set_discrete=("ppo", [1])), "not a single value"),
    (RangedHParams(), "name no hparam"),
])
def test_a_range_that_does_not_fit_the_set_is_one_clear_error(ranges, message):
    with pytest.raises(UserError) as error:
        check_ranges(ranges, create_hparams("rlmf_minatar"), "ranges 'mine'")
    assert message in str(error.value)


def test_ranges_refuse_empty_or_backwards_bounds():
    ranges = RangedHParams()
    for call in (lambda: ranges.set_float("a", 1.0, 0.5), lambda: ranges.set_float("a", 0.0, 1.0, scale="log"),
                 lambda: ranges.set_discrete("a", [])):
        with pytest.raises(ValueError):
            call()
    ranges.set_float("a", 0.0, 1.0)
    with pytest.raises(ValueError, match="ranged twice"):
        ranges.set_int("a", 1, 2)


def test_trial_overrides_set_exactly_the_drawn_values():
    values = {"ppo.learning_rate": 0.00012345678901234567, "ppo.num_minibatches": 8,
              "ppo.policy_network": "minatar_cnn"}
    hparams = create_hparams("rlmf_minatar", trial_overrides(values))
    assert hparams.ppo.learning_rate == values["ppo.learning_rate"]
    assert (hparams.ppo.num_minibatches, hparams.ppo.policy_network) == (8, "minatar_cnn")
    assert isinstance(hparams, HParams)


def test_the_listing_command_shows_ranged_sets(cli):
    listing = cli("rlkit.hparams", "--list_ranges")
    assert listing.returncode == 0 and "ppo_learning" in listing.stdout
    shown = cli("rlkit.hparams", "--show_ranges=simple_loop")
    assert "world_model.hidden_size: one of [32, 64, 96]" in shown.stdout
    assert "ppo.learning_rate: float in [1e-05, 0.001], log scale" in shown.stdout
