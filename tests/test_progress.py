"""Progress lines: rate and ETA, also for a job whose first part runs at another speed."""

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
