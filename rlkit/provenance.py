"""Which code made a run: the record every command writes into its run directory.

    provenance.record_run(output_dir)   # cli.start_run calls it for every command that writes a run

RUN/provenance.json is a list of records, the first the one the run started under:

    {"commit": "3eae756...", "dirty": false, "rlkit_version": "0.1.0", "python": "3.11.7",
     "tensorflow": "2.21.0", "keras": "3.12.0", "numpy": "2.1.3", "cpu": "Intel(R) Xeon(R) ...",
     "cpu_id": "family 6 model 143 stepping 8", "native_bfloat16": true, "since": "2026-11-28T07:38:00"}

`commit` is the git commit of the checkout rlkit is imported from, and `dirty` whether the code
that runs (rlkit/ and setup.py) had uncommitted changes, with `changed` naming them; an installed
rlkit outside a git checkout records `commit: null` and its version. `native_bfloat16` says
whether the CPU computes bfloat16 natively, which decides what a set's `compute_dtype=auto`
ran in (a CPU's model name need not tell), and `cpu_id` the x86 CPU's family, model and stepping:
virtualised CPUs often say only "AMD EPYC", and two such machines, both with bfloat16, trained
the same DreamerV3 run (same commit, seed and threads) to different policies, where one of them
repeated its own run bit for bit. A rerun under the same code on the same kind of CPU
adds nothing; a rerun under other code (a resume after a pull) or on another CPU adds its record
and says so in one warning line, so a run made by two commits or on two machines shows both. A
finished run's rerun runs nothing and adds nothing (`cli.start_run`'s `finished`: each loop's
final evaluation, eval/final.json for a model-free run); a model-free run finished before
eval/final.json existed still adds one.

The versions are read from the installed packages' metadata, without importing them: a command
refused at its start must not pay for TensorFlow's import.
"""

import datetime
import functools
import importlib.metadata
import json
import os
import platform
import subprocess
import sys

from absl import logging

from rlkit.fileio import atomic_write_text

PROVENANCE_FILE = "provenance.json"
# What a run's numbers depend on; `since` (when the record was made) is not compared.
CODE_KEYS = ("commit", "dirty", "changed", "rlkit_version", "python", "tensorflow", "keras", "numpy", "cpu",
             "cpu_id", "native_bfloat16")
# Keys records made before them lack: compared only where both records have them.
LATER_KEYS = ("cpu_id",)
# The paths whose uncommitted changes make a run's code differ from its commit.
CODE_PATHS = ("rlkit", "setup.py")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _git(*args):
    """git's output in the checkout rlkit is imported from, or None where there is none."""
    try:
        result = subprocess.run(["git", "-C", os.path.dirname(_PACKAGE_DIR), *args], capture_output=True,
                                text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def _git_state():
    """(commit, changed paths) of the checkout holding this rlkit package, or (None, None) where
    rlkit is not imported from a git checkout's rlkit/ (an installed wheel)."""
    top = _git("rev-parse", "--show-toplevel")
    if top is None or os.path.realpath(os.path.join(top.strip(), "rlkit")) != os.path.realpath(_PACKAGE_DIR):
        return None, None
    status = _git("status", "--porcelain", "--", *CODE_PATHS) or ""
    changed = sorted(line[3:] for line in status.splitlines() if line.strip())  # "XY path"
    commit = _git("rev-parse", "HEAD")
    return (commit.strip() if commit else None), changed


def _version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def _cpuinfo_fields():
    """{field: value} of /proc/cpuinfo's first CPU (Linux; {} elsewhere), read once per process."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                name, colon, value = line.partition(":")
                if colon:
                    fields.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    return fields


def _cpuinfo(field):
    """The value of /proc/cpuinfo's first `field` line (Linux), or None."""
    return _cpuinfo_fields().get(field)


def _cpu_model():
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def _cpu_id():
    """'family 25 model 17 stepping 1' on x86 Linux (what tells one "AMD EPYC" from another), or None."""
    family, model, stepping = (_cpuinfo(field) for field in ("cpu family", "model", "stepping"))
    return f"family {family} model {model} stepping {stepping}" if family and model and stepping else None


def native_bfloat16():
    """Whether this CPU computes bfloat16 natively (AMX or AVX512-BF16; Linux's CPU flags)."""
    flags = (_cpuinfo("flags") or "").split()
    return "amx_bf16" in flags or "avx512_bf16" in flags


def current():
    """This process's record: the code, the library versions and the CPU."""
    commit, changed = _git_state()
    tensorflow = _version("tensorflow") or _version("tensorflow-cpu")
    record = {"commit": commit, "dirty": bool(changed), "changed": changed or [],
              "rlkit_version": _version("rlkit"), "python": platform.python_version(), "tensorflow": tensorflow,
              "keras": _version("keras"), "numpy": _version("numpy"), "cpu": _cpu_model(),
              "cpu_id": _cpu_id(), "native_bfloat16": native_bfloat16(),
              "since": datetime.datetime.now().isoformat(timespec="seconds")}
    if commit is None:
        record["dirty"] = None  # unknown: no git checkout to compare with
    return record


def read(run_dir):
    """The records of the run in `run_dir` (oldest first), [] for a run made before they existed."""
    path = os.path.join(run_dir, PROVENANCE_FILE)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        records = json.load(f)
    return records if isinstance(records, list) else [records]


def describe(record):
    """'3eae756' or '3eae756+changes' or 'rlkit 0.1.0' (no git), for one line."""
    if record.get("commit"):
        return record["commit"][:7] + ("+changes" if record.get("dirty") else "")
    return f"rlkit {record.get('rlkit_version')}"


def same_code(a, b):
    return all(a.get(k) == b.get(k) for k in CODE_KEYS if k not in LATER_KEYS or (k in a and k in b))


def machine(record):
    """The CPU a record ran on, for one line: its model name, whether it computes bfloat16
    natively (two machines may share a model name, virtualised CPUs often say only "AMD EPYC",
    and differ in that, which changes what `compute_dtype=auto` runs in), and its `cpu_id`."""
    return ((record.get("cpu") or "an unrecorded CPU") + (" with bfloat16" if record.get("native_bfloat16") else "")
            + (f" ({record['cpu_id']})" if record.get("cpu_id") else ""))


def record_run(run_dir, record=None):
    """Adds this process's record to RUN/provenance.json unless the run's last record has the
    same code on the same CPU; a run resumed under other code or on another CPU gets one warning
    line. Returns the records."""
    record = record or current()
    records = read(run_dir)
    if records and same_code(records[-1], record):
        return records
    if records:
        now, before = describe(record), describe(records[-1])
        if machine(record) != machine(records[-1]):
            now, before = f"{now} on {machine(record)}", f"{before} on {machine(records[-1])}"
        logging.warning("Resuming %s under %s, not %s as its last part ran; %s keeps both records", run_dir,
                        now, before, PROVENANCE_FILE)
    records.append(record)
    atomic_write_text(os.path.join(run_dir, PROVENANCE_FILE), json.dumps(records, indent=2) + "\n")
    return records


if __name__ == "__main__":  # python -m rlkit.provenance: this checkout's record
    print(json.dumps(current(), indent=2), file=sys.stdout)
