"""The hparam-set registry, and how sets name other sets.

A set is a function returning `HParams`, registered under its own name:

    @register_hparams
    def rlmb_tiny():
        hparams = rlmb_base()
        hparams.epochs = 1
        return hparams

A set may name another set in a key ending in `_params`: `ppo_params="ppo_original_params"`.
Keys of the form `ppo_<key>` then override `<key>` in that set, as in tensor2tensor. The
references resolve in one place, `resolve_references`, which makes every referenced value an
explicit prefixed key; that fully resolved set is what `--show` prints and what a run saves.
"""

from rlkit.errors import UserError, did_you_mean
from rlkit.hparams.hparam import HParams, coerce_value, parse_value, split_overrides
from rlkit.registry import Registry

REFERENCE_SUFFIX = "_params"

_SETS = Registry("hparams set", "python -m rlkit.hparams --list shows them all")


def register_hparams(fn):
    """Registers an hparam-set function under its name. Duplicate names are an error."""
    return _SETS.register(fn)


def list_hparams():
    return _SETS.names()


def describe_hparams(name):
    """The first line of a set's docstring."""
    doc = (_SETS.get(name).__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def get_hparams(name):
    """A fresh copy of the registered set `name`."""
    hparams = _SETS.get(name)()
    if not isinstance(hparams, HParams):
        raise TypeError(f"hparams set {name!r} returned {type(hparams).__name__}, not HParams")
    return hparams


def _references(hparams):
    """{prefix: set name} for every `<prefix>_params` key that names a set."""
    return {key[:-len(REFERENCE_SUFFIX)]: value for key, value in hparams.values().items()
            if key.endswith(REFERENCE_SUFFIX) and isinstance(value, str) and value}


def _reference_prefix(name, references):
    """The longest reference prefix that `name` starts with, or None."""
    matches = [prefix for prefix in references if name.startswith(prefix + "_")
               and name != prefix + REFERENCE_SUFFIX]
    return max(matches, key=len) if matches else None


def _flat_candidates(hparams):
    """Every name an override may use: own keys and prefixed keys of referenced sets."""
    names = set(hparams.values())
    for prefix, set_name in _references(hparams).items():
        if set_name in _SETS:
            names.update(f"{prefix}_{key}" for key in resolve_references(get_hparams(set_name)).values())
    return names


def apply_overrides(hparams, overrides):
    """Applies 'name=value,...' to `hparams`; prefixed names may reach into referenced sets.

    `ppo_learning_rate=1e-4` is accepted when `hparams` has `ppo_params` naming a set with
    `learning_rate`, even if `hparams` had no `ppo_learning_rate` yet; the type comes from
    the referenced set.
    """
    for name, text in split_overrides(overrides or ""):
        if name in hparams:
            hparams.set_hparam(name, parse_value(name, text, getattr(hparams, name)))
            continue
        references = _references(hparams)
        prefix = _reference_prefix(name, references)
        if prefix is not None:
            referenced = resolve_references(get_hparams(references[prefix]))
            key = name[len(prefix) + 1:]
            if key in referenced:
                hparams.add_hparam(name, parse_value(name, text, getattr(referenced, key)))
                continue
        raise UserError(f"unknown hparam {name!r}{did_you_mean(name, _flat_candidates(hparams))}")
    return hparams


def resolve_references(hparams):
    """A copy of `hparams` in which every key of every referenced set is an explicit prefixed key.

    Own prefixed keys win over the referenced set's value and must match its type. A prefixed
    key the referenced set does not have is an error, so a stale name fails when the set is built.
    """
    references = _references(hparams)
    referenced_sets = {prefix: resolve_references(get_hparams(set_name))
                       for prefix, set_name in references.items()}
    values = hparams.values()
    for name, value in hparams.values().items():
        prefix = _reference_prefix(name, references)
        if prefix is None:
            continue
        key, referenced = name[len(prefix) + 1:], referenced_sets[prefix]
        if key not in referenced:
            raise UserError(f"hparam {name!r} overrides {key!r}, which set {references[prefix]!r} "
                            f"does not have{did_you_mean(key, referenced.values())}")
        values[name] = coerce_value(name, value, getattr(referenced, key))
    for prefix, referenced in referenced_sets.items():
        for key, value in referenced.values().items():
            values.setdefault(f"{prefix}_{key}", value)
    return HParams(**values)


def referenced_hparams(hparams, prefix):
    """The set named by `hparams.<prefix>_params`, with every `<prefix>_<key>` override applied."""
    referenced = resolve_references(get_hparams(getattr(hparams, prefix + REFERENCE_SUFFIX)))
    for name, value in resolve_references(hparams).values().items():
        if _reference_prefix(name, _references(hparams)) == prefix:
            referenced.set_hparam(name[len(prefix) + 1:], value)
    return referenced


def create_hparams(set_name, overrides=""):
    """The registered set `set_name` with `overrides` applied, references resolved."""
    return resolve_references(apply_overrides(get_hparams(set_name), overrides))
