"""`HParams`: a typed set of named hyperparameters, which may hold other sets.

Values are int, float, bool, str, lists of those, or a nested `HParams` (a loop set holds its
PPO set as `hparams.ppo`). Once a name exists its type is fixed: `set_hparam` and override
strings such as `game=pong,ppo.learning_rate=3e-4,eval_sampling_temps=[0.0,0.5]` are checked
against the current value, so a typo or a wrong type fails where it is written. Dotted names
reach into nested sets.

Every value remembers where it was last set (`origin`): the function, file and line that set
it, or "--hparams" for an override; `python -m rlkit.hparams --show=SET --explain` prints them.
"""

import json
import linecache
import os
import sys

from rlkit.errors import UserError, did_you_mean

_SCALAR_TYPES = (bool, int, float, str)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OVERRIDE = "--hparams"  # the origin of a value an override string set


def _caller():
    """(function, file, its first line, the line) of the nearest caller outside this module: the
    code that set a value."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return ("?", "?", 0, 0)
    code = frame.f_code
    return (code.co_name, code.co_filename, code.co_firstlineno, frame.f_lineno)


def _describe_origin(name, origin):
    """'function (file:line)' for an origin of `name`: the line that names it where the setting
    line does not (a keyword of a call that spans lines, `HParams(\n  name=value, ...)`, or of
    a dict the function then loops over)."""
    if isinstance(origin, str):
        return origin
    function, path, first_line, line = origin

    def names_it(number):
        text = linecache.getline(path, number).strip()
        return text.startswith(f"{name}=") or f'"{name}"' in text
    if name not in linecache.getline(path, line):
        candidates = []
        for number in range(line + 1, line + 200):  # the rest of a call that spans lines
            text = linecache.getline(path, number).strip()
            if not text or text.startswith(")"):
                break
            candidates.append(number)
        candidates += range(line - 1, first_line - 1, -1)  # then back up the function: a dict it loops over
        line = next((number for number in candidates if names_it(number)), line)
    if path.startswith(_ROOT + os.sep):
        path = os.path.relpath(path, _ROOT)
    return f"{function} ({path}:{line})"


def _type_name(value):
    """'a list', 'an int', 'a float', 'a set of hparams', ..."""
    if type(value).__name__ == "HParams":
        return "a set of hparams"
    name = "list" if isinstance(value, list) else type(value).__name__
    return ("an " if name[0] in "aeiou" else "a ") + name


def _check_scalar(name, value):
    if not isinstance(value, _SCALAR_TYPES):
        raise TypeError(f"hparam {name!r}: {type(value).__name__} values are not supported "
                        "(use int, float, bool, str or a list of those)")


def _validated(name, value):
    """Checks a value for a new hparam and returns it (lists are copied)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_scalar(name, item)
        return list(value)
    _check_scalar(name, value)
    return value


def coerce_value(name, value, current):
    """Returns `value` converted to the type of `current`, or raises UserError."""
    expected = _type_name(current)
    if isinstance(current, list):
        if not isinstance(value, (list, tuple)):
            raise UserError(f"hparam {name!r} expects a list, got {value!r}")
        if not current:
            return _validated(name, value)
        return [coerce_value(name, item, current[0]) for item in value]
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(current, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(current, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif isinstance(current, str):
        if isinstance(value, str):
            return value
    raise UserError(f"hparam {name!r} expects {expected}, got {value!r}")


def _parse_scalar(name, text, current):
    """Parses the text of one override value as the type of `current`."""
    if isinstance(current, bool):
        lowered = text.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise UserError(f"hparam {name!r} expects a bool (true or false), got {text!r}")
    if isinstance(current, int):
        try:
            return int(text)
        except ValueError:
            raise UserError(f"hparam {name!r} expects an int, got {text!r}") from None
    if isinstance(current, float):
        try:
            return float(text)
        except ValueError:
            raise UserError(f"hparam {name!r} expects a float, got {text!r}") from None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text


def _guess_scalar(text):
    """Parses a list item when the current list is empty and gives no type."""
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_value(name, text, current):
    """Parses the text of an override value as the type of `current` (a list type included)."""
    text = text.strip()
    if not isinstance(current, list):
        return _parse_scalar(name, text, current)
    if not (text.startswith("[") and text.endswith("]")):
        raise UserError(f"hparam {name!r} expects a list such as [1,2], got {text!r}")
    inner = text[1:-1].strip()
    items = [item.strip() for item in inner.split(",")] if inner else []
    if any(not item for item in items):
        raise UserError(f"hparam {name!r}: empty item in list {text!r}")
    if current:
        return [_parse_scalar(name, item, current[0]) for item in items]
    return [_guess_scalar(item) for item in items]


def split_overrides(overrides):
    """Splits 'a=1,b=[1,2],c=x' into [('a', '1'), ('b', '[1,2]'), ('c', 'x')].

    Commas inside brackets belong to a list value. A fragment without '=' or with an empty
    name is refused, naming the fragment.
    """
    fragments, depth, start = [], 0, 0
    for i, char in enumerate(overrides):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise UserError(f"malformed hparams {overrides!r}: unmatched ']'")
        elif char == "," and depth == 0:
            fragments.append(overrides[start:i])
            start = i + 1
    if depth != 0:
        raise UserError(f"malformed hparams {overrides!r}: unmatched '['")
    fragments.append(overrides[start:])
    pairs = []
    for fragment in fragments:
        if not fragment.strip():
            continue
        name, sep, value = fragment.partition("=")
        name = name.strip()
        if not sep or not all(part.isidentifier() for part in name.split(".")):
            raise UserError(f"malformed hparams fragment {fragment.strip()!r}: expected name=value, "
                            "e.g. --hparams=game=pong,epochs=1")
        pairs.append((name, value))
    return pairs


class HParams:
    """Named hyperparameters with attribute access, e.g. `hparams.learning_rate`, `hparams.ppo.gamma`."""

    def __init__(self, **values):
        self._values = {}
        self._origins = {}  # name -> where its value was last set: _caller()'s, or OVERRIDE
        for name, value in values.items():
            self.add_hparam(name, value)

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"unknown hparam {name!r}{did_you_mean(name, values)}")

    def __setattr__(self, name, value):
        if name in ("_values", "_origins"):
            super().__setattr__(name, value)
        else:
            self.set_hparam(name, value)

    def __contains__(self, name):
        return name in self._values

    def __eq__(self, other):
        return isinstance(other, HParams) and self.values() == other.values()

    def __repr__(self):
        return f"HParams({self.to_json()})"

    def add_hparam(self, name, value):
        """Adds a new name; its type is fixed from here on."""
        if name in self._values:
            raise ValueError(f"hparam {name!r} already exists; use set_hparam to change it")
        if not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"bad hparam name {name!r}")
        self._values[name] = value.copy() if isinstance(value, HParams) else _validated(name, value)
        self._origins[name] = _caller()

    def set_hparam(self, name, value):
        """Changes an existing value, keeping its type (an int may set a float; a nested set is
        replaced by another set)."""
        if name not in self._values:
            raise UserError(f"unknown hparam {name!r}{did_you_mean(name, self._values)}")
        current = self._values[name]
        if isinstance(current, HParams) != isinstance(value, HParams):
            raise UserError(f"hparam {name!r} expects {_type_name(current)}, got {value!r}")
        self._values[name] = value.copy() if isinstance(value, HParams) else coerce_value(name, value, current)
        self._origins[name] = _caller()

    def get(self, name, default=None):
        return self._values.get(name, default)

    def values(self):
        """A copy of all values as plain (nested) dicts, in the order they were added."""
        return {name: v.values() if isinstance(v, HParams) else list(v) if isinstance(v, list) else v
                for name, v in self._values.items()}

    def flat_values(self, prefix=""):
        """{dotted name: value} of every leaf value, nested sets included."""
        flat = {}
        for name, value in self._values.items():
            if isinstance(value, HParams):
                flat.update(value.flat_values(f"{prefix}{name}."))
            else:
                flat[prefix + name] = list(value) if isinstance(value, list) else value
        return flat

    def copy(self):
        copied = HParams(**self._values)  # add_hparam copies nested sets and lists
        copied._origins = dict(self._origins)
        return copied

    def origin(self, name):
        """Where the value `name` was last set: 'function (file:line)', or "--hparams"."""
        return _describe_origin(name, self._origins.get(name, "?"))

    def take_values(self, other):
        """Sets each of this set's values that `other` holds to `other`'s, keeping where `other`
        got them (an env set's values copied into a loop set still name the env set)."""
        for name, value in other._values.items():
            self.set_hparam(name, value)
            self._origins[name] = other._origins.get(name, "?")

    def explained(self, prefix=""):
        """[(dotted name, value, origin)] of every leaf value, nested sets included (`origin`)."""
        rows = []
        for name, value in self._values.items():
            if isinstance(value, HParams):
                rows += value.explained(f"{prefix}{name}.")
            else:
                rows.append((prefix + name, value, self.origin(name)))
        return rows

    def lookup(self, dotted_name):
        """(the set holding the value, its own name) for `ppo.learning_rate`; UserError if unknown."""
        *path, name = dotted_name.split(".")
        owner = self
        for part in path:
            owner = owner.get(part)
            if not isinstance(owner, HParams):
                break
        else:
            if name in owner:
                return owner, name
        raise UserError(f"unknown hparam {dotted_name!r}{did_you_mean(dotted_name, self.all_names())}")

    def all_names(self):
        """Every name an override may use: leaf values and nested sets, dotted."""
        names = list(self.flat_values())
        names += [f"{name}" for name, value in self._values.items() if isinstance(value, HParams)]
        return names

    def parse(self, overrides, get_set=None):
        """Applies an override string such as 'game=pong,ppo.gamma=0.9' to existing names.

        A nested set is replaced by `get_set(text)` (the registry's lookup by name) when given.
        """
        for name, text in split_overrides(overrides or ""):
            owner, key = self.lookup(name)
            current = owner._values[key]
            if not isinstance(current, HParams):
                owner._values[key] = parse_value(name, text, current)
            elif get_set is not None:
                owner._values[key] = get_set(text.strip())
            else:
                raise UserError(f"hparam {name!r} is a set of hparams: override its values ({name}.NAME=...)")
            owner._origins[key] = OVERRIDE
        return self

    def to_json(self, indent=None):
        return json.dumps(self.values(), indent=indent, sort_keys=indent is not None)

    @classmethod
    def from_dict(cls, values):
        """An HParams from plain (nested) dicts, as `values()` gives them."""
        return cls(**{name: cls.from_dict(v) if isinstance(v, dict) else v for name, v in values.items()})

    @classmethod
    def from_json(cls, text):
        values = json.loads(text)
        if not isinstance(values, dict):
            raise UserError("hparams JSON must be an object of name: value")
        return cls.from_dict(values)
