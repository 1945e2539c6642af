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


def test_two_cpus_of_one_name_are_told_apart_by_their_id_and_older_records_lacking_it_still_match(
        tmp_path, caplog):
    older = {"commit": "a" * 40, "dirty": False, "cpu": "AMD EPYC", "native_bfloat16": True}  # no cpu_id yet
    run_dir = str(tmp_path)
    provenance.record_run(run_dir, dict(older))
    here = dict(older, cpu_id="family 25 model 17 stepping 1")
    assert provenance.record_run(run_dir, here) == [older]  # nothing to compare it with: the same machine
    newer_run = tmp_path / "newer"
    newer_run.mkdir()
    provenance.record_run(str(newer_run), here)
    elsewhere = dict(here, cpu_id="family 25 model 1 stepping 1")
    with caplog.at_level(logging.WARNING):
        records = provenance.record_run(str(newer_run), elsewhere)
    assert records == [here, elsewhere]
    (warning,) = [r.getMessage() for r in caplog.records if "keeps both records" in r.getMessage()]
    assert ("on AMD EPYC with bfloat16 (family 25 model 1 stepping 1), "
            "not aaaaaaa on AMD EPYC with bfloat16 (family 25 model 17 stepping 1)") in warning


def test_this_machines_record_names_its_cpu_id_on_x86_linux():
    record = provenance.current()
    if provenance._cpuinfo("cpu family") is None:
        assert record["cpu_id"] is None
    else:
        assert record["cpu_id"].startswith("family ") and " model " in record["cpu_id"] and " stepping " in record["cpu_id"]
