"""The markdown the results pages are made of: a table, the formats of its cells, and the
replacement of a page's section between two marker lines (`<!-- NAME:begin -->`, `<!-- NAME:end -->`)."""

import numpy as np

from rlkit.rl.analysis import statistics


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def replace_between(path, begin, end, text):
    document = open(path).read()
    start, stop = document.index(begin) + len(begin), document.index(end)
    with open(path, "w") as f:
        f.write(document[:start] + "\n" + text + "\n" + document[stop:])


def mean_interval(values, digits=2):
    """'mean [low, high]' with a 95% bootstrap CI over runs; the value alone for one run."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    mean, low, high = statistics.mean_interval(values)
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def noise(finals, errors, digits=2):
    """'evaluation SE / seed std': the final evaluations' mean standard error against the spread
    of the final returns over seeds."""
    errors = [e for e in errors if e is not None]
    spread = f"{np.std(finals, ddof=1):.{digits}f}" if len(finals) > 1 else "—"
    return f"{np.mean(errors):.{digits}f} / {spread}" if errors else f"— / {spread}"


def duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def metric(metrics, name):
    """A world-model metric, or a dash where the held-out episodes were too short to measure it."""
    return f"{metrics[name]:.3f}" if name in metrics else "— (episodes too short)"
