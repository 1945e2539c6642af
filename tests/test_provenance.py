"""The provenance record: what a run's resume adds, and what it says."""

import json
import logging

from rlkit import provenance


def test_a_resume_on_a_cpu_that_differs_only_in_native_bfloat16_adds_a_record_and_names_both_machines(
        tmp_path, caplog):
    # Two sessions' machines, both "AMD EPYC" by name: one computes bfloat16 natively.
    first = {"commit": "a" * 40, "dirty": False, "cpu": "AMD EPYC", "native_bfloat16": False}
    run_dir = str(tmp_path)
    assert provenance.record_run(run_dir, dict(first)) == [first]
    assert provenance.record_run(run_dir, dict(first)) == [first]  # same code, same machine: nothing added
    moved = dict(first, native_bfloat16=True)
    with caplog.at_level(logging.WARNING):
        records = provenance.record_run(run_dir, moved)
    assert records == [first, moved] == json.load(open(tmp_path / provenance.PROVENANCE_FILE))
    (warning,) = [r.getMessage() for r in caplog.records if "keeps both records" in r.getMessage()]
    assert "under aaaaaaa on AMD EPYC with bfloat16, not aaaaaaa on AMD EPYC as its last part ran" in warning


def test_a_resume_under_another_commit_on_the_same_machine_names_the_commits_alone(tmp_path, caplog):
    first = {"commit": "a" * 40, "dirty": False, "cpu": "AMD EPYC", "native_bfloat16": False}
    provenance.record_run(str(tmp_path), first)
    with caplog.at_level(logging.WARNING):
        provenance.record_run(str(tmp_path), dict(first, commit="b" * 40, dirty=True))
    (warning,) = [r.getMessage() for r in caplog.records if "keeps both records" in r.getMessage()]
    assert "under bbbbbbb+changes, not aaaaaaa as its last part ran" in warning
