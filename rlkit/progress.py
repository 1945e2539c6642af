"""One-line progress reports for long jobs: steps done / total, rate and ETA."""

import math
import time


def format_duration(seconds):
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def _format_stat(value):
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


class Progress:
    """Tracks a job of `total` steps that may start part-way (a resumed run)."""

    def __init__(self, total, done=0, unit="steps", done_seconds=None):
        """done_seconds: the wall time the `done` part took in earlier processes (a resumed SimPLe
        loop's stored epochs); the rate then counts it, so a resumed slow job has an ETA at once."""
        self.total = total
        self.unit = unit
        self.restart(done)
        if done_seconds:
            self._start_done, self._start_time = 0, self._start_time - done_seconds

    def restart(self, done):
        """Measures the rate (and so the ETA) from `done` on: for a job whose first part runs at
        another speed, such as the Dreamer loop's random prefill."""
        self._start_done, self._start_time = done, time.monotonic()

    def rate(self, done):
        elapsed = time.monotonic() - self._start_time
        return (done - self._start_done) / elapsed if elapsed > 0 else 0.0

    def line(self, done, **stats):
        """'1,200/6,400 steps (19%) | mean_return -20.5 | 3,210 steps/s | ETA 0:02'."""
        rate = self.rate(done)
        eta = format_duration((self.total - done) / rate) if rate > 0 else "?"
        parts = [f"{done:,}/{self.total:,} {self.unit} ({100 * done / max(self.total, 1):.0f}%)"]
        parts += [f"{name} {_format_stat(value)}" for name, value in stats.items()]
        if rate >= 10:
            parts.append(f"{rate:,.0f} {self.unit}/s")
        elif rate >= 0.1:
            parts.append(f"{rate:.3g} {self.unit}/s")
        elif rate > 0:  # a SimPLe epoch takes minutes: "0.00116 epochs/s" says it less plainly
            parts.append(f"{format_duration(1 / rate)} per {self.unit.removesuffix('s')}")
        parts.append(f"ETA {eta}")  # nothing measured yet: no rate, ETA ?
        return " | ".join(parts)
