"""Progress lines: rate and ETA, also for a job whose first part runs at another speed."""

import json

from rlkit import progress as progress_module
from rlkit.progress import Progress


def test_the_eta_follows_the_pace_since_the_last_restart(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    progress = Progress(1000, done=0)
    now[0] = 10.0  # a fast first part: 500 steps in 10 s
    assert progress.line(500).endswith("50 steps/s | ETA 0:10")
    progress.restart(500)
    now[0] = 60.0  # then 100 steps in 50 s: 400 left at 2 steps/s
    assert progress.line(600).endswith("2 steps/s | ETA 3:20")


def test_a_slow_job_says_how_long_each_unit_takes(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    loop = Progress(15, done=0, unit="epochs")
    assert loop.line(0) == "0/15 epochs (0%) | ETA ?"
    now[0] = 600.0
    assert loop.line(1, real_steps=6400) == "1/15 epochs (7%) | real_steps 6,400 | 10:00 per epoch | ETA 2:20:00"


def test_a_resumed_job_has_an_eta_from_the_time_its_done_part_took(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    loop = Progress(15, done=5, unit="epochs", done_seconds=3000.0)  # 5 epochs took 10 min each
    assert loop.line(5).endswith("10:00 per epoch | ETA 1:40:00")
    now[0] += 1200.0  # the next epoch takes 20 min: 6 epochs in 70 min
    assert loop.line(6).endswith("11:40 per epoch | ETA 1:45:00")


def test_a_resumed_simple_loop_reads_the_time_of_its_stored_epochs(tmp_path):
    from rlkit.rl.loops.simple import stored_epochs
    for epoch, seconds in [(0, {"first_collection": 60.0, "world_model": 540.0}), (1, {"world_model": 300.0})]:
        (tmp_path / f"epoch_{epoch}.json").write_text(json.dumps({"epoch": epoch, "stage_seconds": seconds}))
    (tmp_path / "epoch_3.json").write_text("{}")  # not after an unfinished epoch 2: not counted
    assert stored_epochs(str(tmp_path), 15) == (2, 900.0)
    assert stored_epochs(str(tmp_path / "missing"), 15) == (0, 0.0)
