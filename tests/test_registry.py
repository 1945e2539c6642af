import json

import pytest

from conftest import assert_one_line_error
from rlkit.errors import UserError
from rlkit.hparams import (HParams, create_hparams, get_hparams, list_hparams, referenced_hparams,
                           register_hparams, resolve_references)


@register_hparams
def fake_ppo_params():
    return HParams(learning_rate=2.5e-4, gamma=0.99, optimization_epochs=3)


@register_hparams
def fake_ppo_fast_params():
    hparams = fake_ppo_params()
    hparams.learning_rate = 1e-3
    return hparams


@register_hparams
def fake_world_model_params():
    return HParams(hidden_size=96, num_bits=128)


@register_hparams
def fake_loop_params():
    return HParams(game="pong", epochs=15, ppo_params="fake_ppo_params", ppo_learning_rate=1e-4,
                   world_model_params="fake_world_model_params")


def test_registry_lists_and_returns_fresh_copies():
    assert {"fake_ppo_params", "fake_loop_params", "env_atari", "collect_random"} <= set(list_hparams())
    first = get_hparams("fake_ppo_params")
    first.gamma = 0.5
    assert get_hparams("fake_ppo_params").gamma == 0.99


def test_sets_build_on_each_other():
    assert get_hparams("fake_ppo_fast_params").learning_rate == 1e-3
    assert get_hparams("fake_ppo_fast_params").gamma == 0.99


def test_duplicate_names_are_refused():
    with pytest.raises(ValueError, match="already registered"):
        register_hparams(fake_ppo_params)


def test_unknown_set_names_the_closest():
    with pytest.raises(UserError) as error:
        get_hparams("fake_loop_parms")
    assert "unknown hparams set 'fake_loop_parms'; did you mean 'fake_loop_params'" in str(error.value)


def test_prefixed_keys_override_the_referenced_set():
    loop = create_hparams("fake_loop_params")
    ppo = referenced_hparams(loop, "ppo")
    assert ppo.learning_rate == 1e-4  # from the loop set's ppo_learning_rate
    assert ppo.gamma == 0.99          # from the named set
    assert referenced_hparams(loop, "world_model").hidden_size == 96
    # Resolution makes every referenced value explicit, so the saved set reproduces the run.
    assert loop.ppo_gamma == 0.99 and loop.world_model_num_bits == 128


def test_overrides_reach_referenced_sets():
    loop = create_hparams("fake_loop_params",
                          "ppo_gamma=0.9,world_model_hidden_size=8,ppo_learning_rate=3e-4")
    assert referenced_hparams(loop, "ppo").gamma == 0.9
    assert referenced_hparams(loop, "ppo").learning_rate == 3e-4
    assert referenced_hparams(loop, "world_model").hidden_size == 8
    swapped = create_hparams("fake_loop_params", "ppo_params=fake_ppo_fast_params")
    assert referenced_hparams(swapped, "ppo").learning_rate == 1e-4  # the loop's override still wins


def test_overrides_of_referenced_sets_are_checked():
    with pytest.raises(UserError, match="unknown hparam 'ppo_gama'; did you mean 'ppo_gamma'"):
        create_hparams("fake_loop_params", "ppo_gama=0.9")
    with pytest.raises(UserError, match="expects an int"):
        create_hparams("fake_loop_params", "world_model_hidden_size=big")
    with pytest.raises(UserError, match="unknown hparams set 'fake_ppo_param'"):
        create_hparams("fake_loop_params", "ppo_params=fake_ppo_param")


def test_stale_prefixed_key_in_a_set_fails_when_resolved():
    stale = HParams(ppo_params="fake_ppo_params", ppo_learning_rat=1e-4)
    with pytest.raises(UserError, match="'ppo_learning_rat' overrides 'learning_rat'.*did you mean 'learning_rate'"):
        resolve_references(stale)


def test_resolved_set_round_trips_through_json():
    loop = create_hparams("fake_loop_params", "ppo_gamma=0.9")
    restored = HParams.from_json(loop.to_json())
    assert resolve_references(restored) == loop
    assert referenced_hparams(restored, "ppo").gamma == 0.9


def test_hparams_cli_list_and_show(cli):
    listing = cli("rlkit.hparams", "--list")
    assert listing.returncode == 0, listing.stderr
    names = [line.split()[0] for line in listing.stdout.splitlines()]
    assert {"env_atari", "env_cartpole", "collect_random", "collect_random_tiny"} <= set(names)
    shown = cli("rlkit.hparams", "--show=collect_random_tiny", "--hparams=game=breakout,num_envs=3")
    assert shown.returncode == 0, shown.stderr
    values = json.loads(shown.stdout)
    assert values["game"] == "breakout" and values["num_envs"] == 3 and values["frame_height"] == 105


def test_hparams_cli_errors(cli):
    assert_one_line_error(cli("rlkit.hparams", "--show=colect_random"), "did you mean 'collect_random'")
    assert_one_line_error(cli("rlkit.hparams", "--show=env_atari", "--hparams=gam=pong"),
                          "unknown hparam 'gam'; did you mean 'game'?")
    assert_one_line_error(cli("rlkit.hparams", "--show=env_atari", "--hparams=frame_skip"),
                          "malformed hparams fragment 'frame_skip'")
