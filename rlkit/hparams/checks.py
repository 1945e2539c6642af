"""What each hparam may hold, checked whenever a set is built and overrides are applied.

Rules belong to families of sets, registered beside the family's sets (`register_family`): PPO's
in rlkit.hparams.ppo_sets, the RSSM's in rlkit.hparams.dreamer_sets, and so on. A nested set
states its family (`family="ppo"`) and follows that family's rules; a top-level set follows the
run's rules (env, evaluation, collection: rlkit.hparams.env_sets) and its loop's (`loop`). So a
name two families share (`learning_rate_schedule`, `hidden_size`) has a rule in each, never one
by accident. Each family also has rules that tie its values together. A broken rule is one
UserError line naming the hparam, its value and what is allowed:

    hparam 'epochs' = 0: must be an integer > 0

Names that pick a registered component (`base_algo`, `model`, `policy_network`) and `game` are
checked against their registries and the env by the commands before anything is written
(`rlkit.rl.learners.learner.check_learner`, `rlkit.data_generators.make_env.check_game`). Every name in
rlkit's registered sets has a rule in its family; tests/test_bad_input.py holds them to it.
"""

import dataclasses
from typing import Callable

from rlkit.errors import UserError
from rlkit.hparams.hparam import HParams


def positive(value):
    return None if value > 0 else "> 0"


def non_negative(value):
    return None if value >= 0 else ">= 0"


def probability(value):
    return None if 0 <= value <= 1 else "in [0, 1]"


def discount(value):
    return None if 0 <= value <= 1 else "a discount in [0, 1]"


def anything(value):
    return None


def one_of(*choices):
    def rule(value):
        return None if value in choices else "one of " + ", ".join(repr(c) for c in choices)
    return rule


def list_of(item_rule):
    def rule(value):
        broken = [item_rule(item) for item in value if item_rule(item)]
        return f"a list of values {broken[0]}" if broken else None
    return rule


def non_empty_list_of(item_rule):
    items_rule = list_of(item_rule)
    return lambda value: items_rule(value) if value else "a non-empty list"


def non_empty(value):
    return None if value.strip() else "a non-empty name"


# Learners' learning-rate schedules (rlkit.rl.learners.schedules); the world models' are
# rlkit.models.optimizers.SCHEDULES, checked beside their sets.
LEARNER_SCHEDULES = ("constant", "linear")

# The policy network every learner's set names (rlkit.models.policy_networks), shared on purpose.
POLICY_NETWORK_RULES = {"policy_network": non_empty, "dropout": probability, "mlp_hidden_sizes": list_of(positive)}


@dataclasses.dataclass
class Family:
    """The rules of one family of sets: one per hparam name, and `together(hparams, prefix,
    run)` for rules that tie values together (run: the top-level set the family's set is in);
    and `dev(hparams, run)`, which shrinks a set of the family for debugging (`dev_version`)."""
    rules: dict
    together: Callable = None
    dev: Callable = None


_FAMILIES = {}
RUN = "run"  # top-level sets: the env, evaluation and collection values (rlkit.hparams.env_sets)


def register_family(name, rules, together=None, dev=None):
    """Registers the rules of the sets whose `family` is `name` (the loops' rules under the loop's
    name, applied to the top-level sets whose `loop` it is)."""
    assert name not in _FAMILIES, name
    _FAMILIES[name] = Family(rules, together, dev)


def families():
    return sorted(_FAMILIES)


def _families_of(hparams, top_level):
    """The families whose rules a set follows: its `family`'s; a top-level set follows the run's
    rules and its `loop`'s."""
    if "family" in hparams:
        return [_FAMILIES[hparams.family]]
    if top_level:
        return [_FAMILIES[RUN]] + ([_FAMILIES[hparams.loop]] if hparams.get("loop") in _FAMILIES else [])
    return []  # a nested set of a run saved before sets stated their family and not given one on reading


def rules_of(hparams, top_level=True):
    """Every name's rule for `hparams` (not its nested sets), from its families."""
    rules = {"family": one_of(*_FAMILIES)}
    for family in _families_of(hparams, top_level):
        rules.update(family.rules)
    return rules


def _broken(rule, value):
    if isinstance(value, (int, float)) and not isinstance(value, bool) and rule in (positive, non_negative):
        return None if rule(value) is None else ("an integer " if isinstance(value, int) else "") + rule(value)
    return rule(value)


def check_hparams(hparams, prefix="", run=None):
    """Raises UserError for the first value that breaks its family's rule; returns `hparams`."""
    top_level = run is None
    run = hparams if top_level else run
    if hparams.get("family", RUN) not in _FAMILIES:
        raise UserError(f"hparam {prefix + 'family'!r} = {hparams.family!r}: must be one of {', '.join(families())}")
    rules = rules_of(hparams, top_level)
    for name, value in hparams.values().items():
        if isinstance(hparams.get(name), HParams):
            check_hparams(hparams.get(name), f"{prefix}{name}.", run)
            continue
        rule = rules.get(name)
        allowed = _broken(rule, value) if rule else None
        if allowed:
            raise UserError(f"hparam {prefix + name!r} = {value!r}: must be {allowed}")
    for family in _families_of(hparams, top_level):
        if family.together is not None:
            family.together(hparams, prefix, run)
    return hparams


DEV_STEPS = 400  # real agent steps of a dev run that counts them in num_env_steps


def shrink(hparams, name, value):
    """Sets `name` to at most `value`, where `hparams` has it."""
    if name in hparams and not isinstance(hparams.get(name), HParams):
        current = hparams.get(name)
        setattr(hparams, name, type(current)(min(current, value)) if isinstance(current, (int, float)) else value)


def dev_version(hparams):
    """`hparams` shrunk for debugging (`python -m rlkit.rl.lab --mode=dev`), each set by its
    family's `dev`: the run's values first (one env, one short evaluation episode per setting),
    then the nested sets', then the loop's (a few hundred real steps or two short epochs, an
    update, checkpoint, summary and evaluation every few iterations). Network sizes and learning
    values stay as the set has them."""
    hparams = hparams.copy()
    run_family, *loop_family = _families_of(hparams, top_level=True)
    nested = [hparams.get(name) for name in hparams.values() if isinstance(hparams.get(name), HParams)]
    for family, values in ([(run_family, hparams)] + [(f, n) for n in nested for f in _families_of(n, False)]
                           + [(f, hparams) for f in loop_family]):
        if family.dev is not None:
            family.dev(values, hparams)
    return hparams


def fail(prefix, name, value, allowed):
    """A broken rule that ties values together, as one UserError line."""
    raise UserError(f"hparam {prefix + name!r} = {value!r}: {allowed}")


def expect_family(hparams, name, family, prefix, example=None):
    """A nested set in the role of `family` (a loop's learner or world model) must be one."""
    nested = hparams.get(name)
    stated = nested.get("family") if isinstance(nested, HParams) else None
    if stated is not None and stated != family:
        instance = f" (for instance {name}={example})" if example else " (python -m rlkit.hparams --list)"
        fail(prefix, name, f"<a {stated} set>", f"must be a {family} set here{instance}")


def check_frame_decoding(world_model, pixel_values):
    """Object frames read on/off cells (MinAtar's): refused for frames of other values, which the
    env gives (so no rule on the set alone can say)."""
    if world_model.frame_decoding == "objects" and pixel_values != 2:
        raise UserError(f"world_model.frame_decoding=objects is for on/off frames (MinAtar's), not frames of "
                        f"{pixel_values} values: use frame_decoding=likeliest")
