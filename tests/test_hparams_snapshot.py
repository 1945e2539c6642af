"""Every registered set resolves to the values recorded in tests/data/hparams_snapshot.json: the
proof that a refactor of the sets (issue 65) changes no value. A deliberate change of a set's
values rewrites the snapshot in the same commit, so the diff shows what changed:

    RLKIT_WRITE_HPARAMS_SNAPSHOT=1 python -m pytest -q tests/test_hparams_snapshot.py
"""

import json
import os

from rlkit.hparams import create_hparams, list_hparams
from rlkit.hparams.registry import registered_function

SNAPSHOT = os.path.join(os.path.dirname(__file__), "data", "hparams_snapshot.json")


def resolved_sets():
    """rlkit's own sets (not those other tests register in this process), resolved."""
    return {name: json.loads(create_hparams(name).to_json()) for name in list_hparams()
            if registered_function(name).__module__.startswith("rlkit.")}


def test_every_registered_set_resolves_to_its_snapshot():
    sets = resolved_sets()
    if os.environ.get("RLKIT_WRITE_HPARAMS_SNAPSHOT"):
        with open(SNAPSHOT, "w") as f:
            json.dump(sets, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(SNAPSHOT) as f:
        snapshot = json.load(f)
    assert sorted(sets) == sorted(snapshot), set(sets) ^ set(snapshot)
    changed = [name for name in sets if sets[name] != snapshot[name]]
    assert not changed, f"sets that resolve to other values than the snapshot's: {changed}"
