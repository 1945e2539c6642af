import json

import pytest

from conftest import assert_one_line_error
from rlkit.errors import UserError
from rlkit.hparams import HParams, create_hparams, get_hparams, list_hparams, register_hparams
from rlkit.hparams.checks import check_hparams


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
    hparams = HParams(game="pong", epochs=15, ppo=fake_ppo_params(), world_model=fake_world_model_params())
    hparams.ppo.learning_rate = 1e-4
    return hparams


def test_registry_lists_and_returns_fresh_copies():
    assert {"fake_ppo_params", "fake_loop_params", "env_atari", "collect_random"} <= set(list_hparams())
    first = get_hparams("fake_loop_params")
    first.ppo.gamma = 0.5
    assert get_hparams("fake_loop_params").ppo.gamma == 0.99


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


def test_nested_sets_hold_their_components_values():
    loop = create_hparams("fake_loop_params")
    assert loop.ppo.learning_rate == 1e-4  # set by the loop set
    assert loop.ppo.gamma == 0.99         # from the nested set
    assert loop.world_model.hidden_size == 96
    assert loop.flat_values()["world_model.num_bits"] == 128


def test_dotted_overrides_reach_nested_sets():
    loop = create_hparams("fake_loop_params", "ppo.gamma=0.9,world_model.hidden_size=8,ppo.learning_rate=3e-4")
    assert loop.ppo.gamma == 0.9 and loop.ppo.learning_rate == 3e-4
    assert loop.world_model.hidden_size == 8
    # A nested set is swapped for a registered one by name; later overrides change it.
    swapped = create_hparams("fake_loop_params", "ppo=fake_ppo_fast_params,ppo.gamma=0.5")
    assert swapped.ppo.learning_rate == 1e-3 and swapped.ppo.gamma == 0.5


def test_dotted_overrides_are_checked():
    with pytest.raises(UserError, match="unknown hparam 'ppo.gama'; did you mean 'ppo.gamma'"):
        create_hparams("fake_loop_params", "ppo.gama=0.9")
    with pytest.raises(UserError, match="unknown hparam 'wrld_model.hidden_size'; did you mean 'world_model.hidden_size'"):
        create_hparams("fake_loop_params", "wrld_model.hidden_size=8")
    with pytest.raises(UserError, match="expects an int"):
        create_hparams("fake_loop_params", "world_model.hidden_size=big")
    with pytest.raises(UserError, match="unknown hparams set 'fake_ppo_param'"):
        create_hparams("fake_loop_params", "ppo=fake_ppo_param")
    with pytest.raises(UserError, match="unknown hparam 'game.x'"):
        create_hparams("fake_loop_params", "game.x=1")


def test_nested_set_round_trips_through_json():
    loop = create_hparams("fake_loop_params", "ppo.gamma=0.9")
    text = loop.to_json(indent=2)
    assert json.loads(text)["ppo"]["gamma"] == 0.9  # saved nested
    restored = HParams.from_json(text)
    assert restored == loop and restored.ppo.gamma == 0.9
    restored.ppo.gamma = 0.1
    assert loop.ppo.gamma == 0.9  # no shared nested set


@pytest.mark.parametrize("name", list_hparams())
def test_every_registered_set_builds_and_round_trips(name):
    hparams = get_hparams(name)
    assert HParams.from_json(hparams.to_json()) == hparams
    assert create_hparams(name, "") == hparams


def test_the_learner_registry_says_which_learners_learn_from_replay():
    """The loop's checks ask this before any learner is built (so before TensorFlow builds a network)."""
    from rlkit.rl.learners.learner import learns_from_replay
    answers = {}
    for name in list_hparams():
        hparams = create_hparams(name)
        if "base_algo" in hparams:
            answers[hparams.base_algo] = learns_from_replay(hparams)
    assert answers == {"ppo": False, "a2c": False, "reinforce": False, "dqn": True, "naf": True}


def test_saved_runs_without_keys_added_later_get_their_old_behaviour(tmp_path):
    """A run saved before `simulated_reward`, `world_model.predict_episode_ends`,
    `world_model.full_resolution_action_layers` and `world_model.rewarded_window_share` existed
    (a Dreamer run, before `rewarded_sequence_share`, `world_model.unimix` and `episodic_life`)
    reads back with the values that behave as it did, resumes as itself, and other kinds of set
    gain nothing."""
    from rlkit import cli

    loop = create_hparams("rlmb_minatar_tiny", "simulated_reward=expected,world_model.predict_episode_ends=True,"
                                               "world_model.full_resolution_action_layers=2,"
                                               "world_model.rewarded_window_share=0.5")
    old = loop.values()
    del old["simulated_reward"], old["world_model"]["predict_episode_ends"], old["loop"]
    del old["world_model"]["full_resolution_action_layers"], old["world_model"]["rewarded_window_share"]
    del old["world_model"]["family"], old["ppo"]["family"]
    (tmp_path / "hparams.json").write_text(json.dumps(old))
    restored = cli.saved_hparams(str(tmp_path))
    assert restored.loop == "simple"  # sets state their loop since issue 65, their family too
    assert (restored.world_model.family, restored.ppo.family) == ("next_frame", "ppo")
    assert restored.simulated_reward == "likeliest" and restored.world_model.predict_episode_ends is False
    assert restored.world_model.full_resolution_action_layers == 0
    assert restored.world_model.rewarded_window_share == 0.0
    restored.simulated_reward, restored.world_model.predict_episode_ends = "expected", True
    restored.world_model.full_resolution_action_layers, restored.world_model.rewarded_window_share = 2, 0.5
    assert restored == loop
    assert cli.run_hparams(str(tmp_path), "rlmb_minatar_tiny", True, "").simulated_reward == "likeliest"

    dreamer = create_hparams("dreamer_v2_tiny", "rewarded_sequence_share=0.5,world_model.unimix=0.01,episodic_life=True")
    old = dreamer.values()
    del old["rewarded_sequence_share"], old["world_model"]["unimix"], old["episodic_life"]
    del old["world_model"]["family"], old["actor_critic"]["family"]
    (tmp_path / "hparams.json").write_text(json.dumps(old))
    restored = cli.saved_hparams(str(tmp_path))
    assert (restored.world_model.family, restored.actor_critic.family) == ("rssm", "dreamer_actor_critic")
    assert (restored.rewarded_sequence_share, restored.world_model.unimix, restored.episodic_life) == (0.0, 0.0, False)

    model_free = get_hparams("rlmf_minatar")
    (tmp_path / "hparams.json").write_text(model_free.to_json())
    assert cli.saved_hparams(str(tmp_path)) == model_free
    old = model_free.values()
    del old["loop"], old["ppo"]["family"]
    (tmp_path / "hparams.json").write_text(json.dumps(old))
    assert cli.saved_hparams(str(tmp_path)) == model_free


def test_every_archived_run_reads_back_with_the_loop_it_ran():
    """The archive's runs (docs/results/runs) were saved before sets stated their loop and their
    nested sets' families: read back, each names the loop and families its set names today, and
    passes today's checks."""
    import glob
    import os

    from rlkit.hparams import with_keys_added_later

    checked = 0
    for path in glob.glob(os.path.join(os.path.dirname(__file__), "..", "docs", "results", "runs", "*", "*",
                                       "run.json")):
        run = json.load(open(path))
        saved_path = os.path.join(os.path.dirname(path), "hparams.json")
        if not run.get("hparams_set") or not os.path.exists(saved_path):
            continue
        saved = with_keys_added_later(HParams.from_dict(json.load(open(saved_path))))
        today = create_hparams(run["hparams_set"], run.get("hparams", ""))
        assert saved.loop == today.loop, path
        for name in saved.values():
            if isinstance(saved.get(name), HParams) and name in today:
                assert saved.get(name).family == today.get(name).family, (path, name)
        check_hparams(saved)
        checked += 1
    assert checked >= 100


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
    assert_one_line_error(cli("rlkit.hparams", "--show=rlmb_tiny", "--hparams=ppo.lerning_rate=1"),
                          "did you mean 'ppo.learning_rate'")


def test_every_value_names_the_line_that_set_it():
    """--explain: each resolved value of every set points at a line of rlkit's sets that names
    it (a keyword, an assignment, a quoted name), and an override says so."""
    import linecache
    import re

    from rlkit.hparams.registry import registered_function

    checked = 0
    for set_name in list_hparams():
        if not registered_function(set_name).__module__.startswith("rlkit."):
            continue
        for name, _, origin in create_hparams(set_name).explained():
            function, path, line = re.fullmatch(r"(\w+) \((rlkit/hparams/\w+\.py):(\d+)\)", origin).groups()
            assert name.split(".")[-1] in linecache.getline(path, int(line)), (set_name, name, origin)
            checked += 1
    assert checked > 4000
    explained = {name: origin for name, _, origin in
                 create_hparams("rlmb_minatar_ends", "ppo.learning_rate=1e-4").explained()}
    assert explained["ppo.learning_rate"] == "--hparams"
    assert explained["world_model.predict_episode_ends"].startswith("_episode_ends (rlkit/hparams/rlmb_sets.py:")
    assert explained["game"].startswith("env_minatar (")  # copied into the loop set, still named
    assert explained["world_model.hidden_size"].startswith("next_frame_minatar (")


def test_no_value_comes_through_more_than_four_sets(monkeypatch):
    """Variants stay shallow (issue 65): every resolved value of every set was set within at
    most 4 registered set functions, the set itself counted (rlmb_minatar_ends -> rlmb_minatar ->
    next_frame_minatar -> next_frame_basic_stochastic_discrete); nested sets count too, values a
    later set replaced do not."""
    import sys

    from rlkit.hparams import hparam
    from rlkit.hparams.registry import registered_function

    names = [name for name in list_hparams() if registered_function(name).__module__.startswith("rlkit.")]
    set_of_code = {registered_function(name).__code__: name for name in names}
    caller = hparam._caller

    class Origin(tuple):
        chain = ()

    def caller_with_chain():
        origin, frame, chain = Origin(caller()), sys._getframe(1), []
        while frame is not None:
            if frame.f_code in set_of_code:
                chain.append(set_of_code[frame.f_code])
            frame = frame.f_back
        origin.chain = tuple(reversed(chain))
        return origin

    monkeypatch.setattr(hparam, "_caller", caller_with_chain)

    def chains(hparams):
        for name, value in hparams._values.items():
            if isinstance(value, HParams):
                yield from chains(value)
            else:
                yield getattr(hparams._origins[name], "chain", ())

    deepest = {name: max(chains(registered_function(name)()), key=len) for name in names}
    assert len(deepest["rlmb_minatar_ends"]) == 4, deepest["rlmb_minatar_ends"]  # the measure sees nesting
    too_deep = {name: " -> ".join(chain) for name, chain in deepest.items() if len(chain) > 4}
    assert not too_deep, too_deep


def test_show_explain_prints_each_value_beside_its_origin():
    import re
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rlkit.hparams", "--show=rlmb_tiny", "--explain",
                          "--hparams=epochs=2"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = {line.split("=")[0].strip(): line for line in out.stdout.splitlines()}
    assert lines["epochs"].endswith("# --hparams") and "= 2 " in lines["epochs"]
    assert re.search(r"# \w+ \(rlkit/hparams/\w+\.py:\d+\)$", lines["world_model.hidden_size"])
