"""Ranged hparam sets: the ranges a hyperparameter search draws a set's values from.

A ranged set is a function naming ranges of dotted hparam names, registered like hparam sets
(tensor2tensor's `register_ranged_hparams`):

    @register_ranged_hparams
    def ppo_learning(rhp):
        \"\"\"PPO's learning rate and entropy bonus.\"\"\"
        rhp.set_float("ppo.learning_rate", 1e-5, 1e-3, scale=rhp.LOG_SCALE)
        rhp.set_float("ppo.entropy_coef", 0.001, 0.05)
        rhp.set_discrete("world_model.hidden_size", [32, 64, 96])

It is used with any set that has those names: `check_ranges` holds each range to the set it is
searched over (the name exists, the range's type is the value's, its ends pass the hparam's own
rule) before a search starts. `python -m rlkit.hparams --list_ranges` lists them. The search
itself (Ray Tune) is `python -m rlkit.rl.lab --mode=search`; this module knows nothing of Ray.
"""

import dataclasses

from rlkit.errors import UserError
from rlkit.hparams.checks import check_hparams
from rlkit.hparams.hparam import HParams, coerce_value
from rlkit.registry import Registry

LINEAR_SCALE = "linear"
LOG_SCALE = "log"
_RANGED_SETS = Registry("ranged hparams set", "python -m rlkit.hparams --list_ranges shows them all")


@dataclasses.dataclass
class Range:
    """One searched hparam: `kind` float or int (between low and high, on a linear or log
    scale), discrete (ordered numbers) or categorical (any values, unordered)."""
    name: str
    kind: str
    low: float = None
    high: float = None
    scale: str = LINEAR_SCALE
    values: list = None

    def describe(self):
        if self.kind in ("float", "int"):
            return f"{self.name}: {self.kind} in [{self.low:g}, {self.high:g}]" + (
                ", log scale" if self.scale == LOG_SCALE else "")
        return f"{self.name}: one of {self.values}"

    def ends(self):
        """The values a range reaches farthest: its bounds, or all its values."""
        return [self.low, self.high] if self.kind in ("float", "int") else list(self.values)


class RangedHParams:
    """The ranges a ranged-set function fills in, in the order it names them."""

    LINEAR_SCALE = LINEAR_SCALE
    LOG_SCALE = LOG_SCALE

    def __init__(self):
        self.ranges = {}

    def _add(self, hparam_range):
        if hparam_range.name in self.ranges:
            raise ValueError(f"hparam {hparam_range.name!r} is ranged twice")
        self.ranges[hparam_range.name] = hparam_range

    def _bounds(self, name, low, high, scale):
        if not low < high:
            raise ValueError(f"range of {name!r}: low {low} must be below high {high}")
        if scale not in (LINEAR_SCALE, LOG_SCALE):
            raise ValueError(f"range of {name!r}: scale must be {LINEAR_SCALE!r} or {LOG_SCALE!r}")
        if scale == LOG_SCALE and low <= 0:
            raise ValueError(f"range of {name!r}: a log scale needs low > 0")

    def set_float(self, name, low, high, scale=LINEAR_SCALE):
        self._bounds(name, low, high, scale)
        self._add(Range(name, "float", float(low), float(high), scale))

    def set_int(self, name, low, high, scale=LINEAR_SCALE):
        self._bounds(name, low, high, scale)
        self._add(Range(name, "int", int(low), int(high), scale))

    def set_discrete(self, name, values):
        """Numbers with an order (layer sizes, rollout lengths)."""
        if not values:
            raise ValueError(f"range of {name!r}: no values")
        self._add(Range(name, "discrete", values=list(values)))

    def set_categorical(self, name, values):
        """Choices without an order (a network's name, an advantage estimator)."""
        if not values:
            raise ValueError(f"range of {name!r}: no values")
        self._add(Range(name, "categorical", values=list(values)))

    def __iter__(self):
        return iter(self.ranges.values())


def register_ranged_hparams(fn):
    """Registers a ranged-set function `fn(rhp)` under its name. Duplicate names are an error."""
    return _RANGED_SETS.register(fn)


def list_ranges():
    return _RANGED_SETS.names()


def describe_ranges(name):
    """The first line of a ranged set's docstring."""
    return _RANGED_SETS.describe(name)


def get_ranges(name):
    """The ranged set `name`, filled in."""
    ranges = RangedHParams()
    _RANGED_SETS.get(name)(ranges)
    return ranges


def check_ranges(ranges, hparams, ranges_name="the ranges"):
    """Holds every range to `hparams`, the set searched over: the dotted name exists and holds a
    value (not a nested set), a float range ranges a float, an int range an int, each listed
    value has the hparam's type, and the range's ends pass the hparam's own rule. UserError
    (one line) otherwise."""
    if not ranges.ranges:
        raise UserError(f"{ranges_name} name no hparam to search")
    for hparam_range in ranges:
        try:
            owner, key = hparams.lookup(hparam_range.name)
        except UserError as e:
            raise UserError(f"{ranges_name}: {e}") from None
        current = owner.get(key)
        where = f"{ranges_name}: {hparam_range.describe()}"
        if isinstance(current, (HParams, list)):
            raise UserError(f"{where}, but {hparam_range.name!r} is not a single value in the set; range its values")
        if hparam_range.kind == "float" and not isinstance(current, float):
            raise UserError(f"{where}, but {hparam_range.name!r} holds {current!r}, not a float")
        if hparam_range.kind == "int" and (isinstance(current, bool) or not isinstance(current, int)):
            raise UserError(f"{where}, but {hparam_range.name!r} holds {current!r}, not an int")
        for value in hparam_range.ends():
            trial = hparams.copy()
            try:
                trial_owner, _ = trial.lookup(hparam_range.name)
                trial_owner.set_hparam(key, coerce_value(hparam_range.name, value, current))
                check_hparams(trial)
            except UserError as e:
                raise UserError(f"{where}: {e}") from None


def trial_overrides(values):
    """The override string that sets a trial's values: 'ppo.learning_rate=0.00012,...' (floats
    written exactly, so the trial's hparams.json holds the value the search drew)."""
    return ",".join(f"{name}={value!r}" if isinstance(value, float) else f"{name}={value}"
                    for name, value in values.items())
