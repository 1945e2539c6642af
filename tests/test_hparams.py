import json

import pytest

from rlkit.errors import UserError
from rlkit.hparams import HParams


def make():
    return HParams(game="pong", epochs=15, learning_rate=2.5e-4, sticky_actions=False,
                   eval_sampling_temps=[0.5, 0.0, 1.0], frame_sizes=[105, 80])


def test_attribute_access_and_values():
    hparams = make()
    assert hparams.game == "pong"
    assert hparams.epochs == 15
    assert hparams.values() == dict(game="pong", epochs=15, learning_rate=2.5e-4, sticky_actions=False,
                                    eval_sampling_temps=[0.5, 0.0, 1.0], frame_sizes=[105, 80])
    hparams.values()["eval_sampling_temps"].append(9.0)  # values() is a copy
    assert hparams.eval_sampling_temps == [0.5, 0.0, 1.0]


def test_parse_the_issue_example_with_types():
    hparams = make()
    hparams.parse("game=breakout,epochs=1,eval_sampling_temps=[0.0,0.5],sticky_actions=true")
    assert hparams.game == "breakout"
    assert hparams.epochs == 1 and isinstance(hparams.epochs, int)
    assert hparams.eval_sampling_temps == [0.0, 0.5]
    assert hparams.sticky_actions is True


def test_parse_converts_to_the_existing_type():
    hparams = make().parse("learning_rate=1,frame_sizes=[84, 84],sticky_actions=False")
    assert hparams.learning_rate == 1.0 and isinstance(hparams.learning_rate, float)
    assert hparams.frame_sizes == [84, 84]
    assert hparams.sticky_actions is False
    assert make().parse("eval_sampling_temps=[]").eval_sampling_temps == []
    assert make().parse("").values() == make().values()


@pytest.mark.parametrize("overrides, message", [
    ("epochs=1.5", "hparam 'epochs' expects an int, got '1.5'"),
    ("epochs=ten", "hparam 'epochs' expects an int"),
    ("learning_rate=fast", "expects a float"),
    ("sticky_actions=maybe", "expects a bool"),
    ("eval_sampling_temps=0.5", "expects a list"),
    ("frame_sizes=[84,x]", "expects an int, got 'x'"),
])
def test_parse_refuses_wrong_types(overrides, message):
    with pytest.raises(UserError, match=message.replace("[", r"\[")):
        make().parse(overrides)


def test_unknown_name_suggests_the_close_one():
    hparams = HParams(learning_rate=0.1)
    with pytest.raises(UserError) as error:
        hparams.parse("lerning_rate=0.2")
    assert str(error.value) == "unknown hparam 'lerning_rate'; did you mean 'learning_rate'?"
    with pytest.raises(UserError, match="unknown hparam 'zzz'$"):
        hparams.parse("zzz=1")
    with pytest.raises(AttributeError, match="did you mean 'learning_rate'"):
        hparams.lerning_rate


@pytest.mark.parametrize("overrides, fragment", [
    ("game=pong,epochs", "'epochs'"),
    ("=3", "'=3'"),
    ("game pong", "'game pong'"),
    ("eval_sampling_temps=[0.1,0.2", "unmatched '['"),
    ("epochs=1]", "unmatched ']'"),
])
def test_malformed_strings_name_the_fragment(overrides, fragment):
    with pytest.raises(UserError, match="malformed hparams") as error:
        make().parse(overrides)
    assert fragment in str(error.value)


def test_set_hparam_is_type_checked():
    hparams = make()
    hparams.epochs = 3
    hparams.learning_rate = 1  # an int may set a float
    assert hparams.learning_rate == 1.0
    with pytest.raises(UserError, match="expects an int"):
        hparams.epochs = "3"
    with pytest.raises(UserError, match="expects a bool"):
        hparams.sticky_actions = 1
    with pytest.raises(UserError, match="unknown hparam"):
        hparams.set_hparam("new_name", 1)


def test_add_hparam():
    hparams = make()
    hparams.add_hparam("batch_size", 16)
    assert hparams.batch_size == 16
    with pytest.raises(ValueError, match="already exists"):
        hparams.add_hparam("batch_size", 32)
    with pytest.raises(TypeError, match="not supported"):
        hparams.add_hparam("schedule", {"a": 1})
    with pytest.raises(TypeError, match="not supported"):
        hparams.add_hparam("nothing", None)


def test_json_round_trip():
    hparams = make()
    text = hparams.to_json(indent=2)
    assert json.loads(text)["eval_sampling_temps"] == [0.5, 0.0, 1.0]
    restored = HParams.from_json(text)
    assert restored == hparams
    assert restored.values() == hparams.values()
    assert restored is not hparams and restored.copy() == hparams
