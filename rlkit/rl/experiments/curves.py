"""Learning curves of rlkit runs, read from their TensorBoard event files (local or gs://) and
drawn with matplotlib: what `python -m rlkit.rl.plot`, the session graphs and the results
tables draw with.

Runs whose names differ only in a seed suffix (`_s0`, `_seed1`, `-2`) are one curve: the mean
over the runs, with a band from their minimum to their maximum. A run with one point (the
evaluator's random baseline, say) is drawn as a dashed horizontal line.
"""

import functools
import glob
import os
import re

import numpy as np

from rlkit import gcs
from rlkit.errors import UserError

SEED_SUFFIX = re.compile(r"(_s|_seed|-)\d+$")
EVENTS = "tfevents"
# What the event steps of each of a run's event directories count.
STEP_UNITS = {"eval_metrics": "real env steps", "eval": "real env steps", "train": "real env steps",
              "policy/simulated": "simulated env steps", "world_model/train": "world-model training steps",
              "world_model/eval": "world-model training steps", "world_model/dream": "world-model training steps"}


def expand_runs(patterns):
    """The run directories the --logdir items name, in order, each once; gs:// runs are
    fetched into the local cache (their event files only)."""
    runs = []
    for pattern in patterns:
        if gcs.is_remote(pattern):
            matches = [(path, gcs.download(path, only=lambda name: EVENTS in os.path.basename(name)))
                       for path in gcs.expand(pattern)]
        else:
            matches = [(path, path) for path in sorted(glob.glob(os.path.expanduser(pattern)))
                       if os.path.isdir(path)]
        if not matches:
            raise UserError(f"--logdir item {pattern!r} matches no run directory: check the path")
        runs += [match for match in matches if match not in runs]
    return runs


def curve_name(run):
    """The curve a run belongs to: its directory name without a seed suffix."""
    return SEED_SUFFIX.sub("", os.path.basename(run.rstrip("/")))


def event_dirs(local_run):
    """{subdir relative to the run: its event directory} of every directory holding event files."""
    found = {}
    for root, _, names in os.walk(local_run):
        if any(EVENTS in name for name in names):
            found[os.path.relpath(root, local_run).replace(os.sep, "/")] = root
    return found


@functools.lru_cache(maxsize=8)
def _loaded_events(event_dir, files):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(event_dir, size_guidance={"tensors": 0, "scalars": 0})
    events.Reload()
    return events


def load_events(event_dir):
    """Every scalar of an event directory, read once for as long as its files stay the same
    (a run's graphs and checks read several tags of one directory)."""
    files = tuple(sorted((entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
                         for entry in os.scandir(event_dir) if EVENTS in entry.name))
    return _loaded_events(event_dir, files)


def read_scalar(event_dir, tag):
    """(steps, values) of `tag` in an event directory, or None if it has no such tag."""
    from tensorboard.util import tensor_util

    events = load_events(event_dir)
    tags = events.Tags()
    if tag in tags.get("tensors", []):
        points = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in events.Tensors(tag)]
    elif tag in tags.get("scalars", []):
        points = [(e.step, e.value) for e in events.Scalars(tag)]
    else:
        return None
    by_step = dict(sorted(points))  # a resumed run may log a step twice: the last value counts
    return np.array(list(by_step), np.int64), np.array(list(by_step.values()), np.float64)


def all_tags(event_dir):
    tags = load_events(event_dir).Tags()
    return tags.get("tensors", []) + tags.get("scalars", [])


def run_series(run, local_run, tag, subdir=None):
    """(event dir relative to the run, steps, values) of `tag` in one run, from the one event
    directory that holds it."""
    dirs = event_dirs(local_run)
    if not dirs:
        raise UserError(f"no TensorBoard event files in {run}: point --logdir at the output dir of an rlkit run")
    if subdir is not None:
        if subdir not in dirs:
            raise UserError(f"--subdir={subdir!r}: {run} has event files in {', '.join(sorted(dirs))}")
        dirs = {subdir: dirs[subdir]}
    found = {name: series for name, path in sorted(dirs.items()) if (series := read_scalar(path, tag)) is not None}
    if not found:
        known = sorted({t for path in dirs.values() for t in all_tags(path)})
        shown = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
        raise UserError(f"no tag {tag!r} in {run}; its tags: {shown}")
    if len(found) > 1:
        raise UserError(f"tag {tag!r} is in several event dirs of {run} ({', '.join(found)}): pick one with --subdir")
    (name, (steps, values)), = found.items()
    return name, steps, values


def aggregate(series):
    """Mean, min and max over runs at the steps every run reached; runs logged at other steps
    are interpolated linearly."""
    last = min(steps[-1] for steps, _ in series)
    grid = np.unique(np.concatenate([steps[steps <= last] for steps, _ in series]))
    values = np.stack([np.interp(grid, steps, values) for steps, values in series])
    return grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0)


def curves(runs, tag, subdir=None):
    """({curve name: (steps, mean, min, max, number of runs)} in the order the runs came,
    what the steps count)."""
    grouped, units = {}, set()
    for run, local_run in runs:
        event_dir, steps, values = run_series(run, local_run, tag, subdir)
        grouped.setdefault(curve_name(run), []).append((steps, values))
        if len(steps) > 1:  # a one-point baseline's step counts nothing
            units.add(STEP_UNITS.get(event_dir, "step"))
    return ({name: (*aggregate(series), len(series)) for name, series in grouped.items()},
            " / ".join(sorted(units)) or "step")


def draw(curves_by_name, tag, path, x_label="real env steps", title=None, xscale="linear", ylim=None):
    """Writes the curves as a PNG at `path` (local), one-point curves as horizontal lines;
    returns {label: the matplotlib line drawn}."""
    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 4.5), dpi=120)
    lines = {}
    for i, (name, (steps, mean, low, high, count)) in enumerate(curves_by_name.items()):
        label = f"{name} ({count} run{'s' if count > 1 else ''})"
        # matplotlib has ten colours: past the tenth curve a colour comes back with another line style.
        colour, style = f"C{i % 10}", ("-", ":", "-.")[i // 10 % 3]
        if len(steps) == 1:  # a baseline: one evaluation
            line = lines[label] = axes.axhline(mean[0], color=colour, linestyle="--", label=label)
            if count > 1:
                axes.axhspan(low[0], high[0], color=line.get_color(), alpha=0.1, linewidth=0)
            continue
        line = lines[label] = axes.plot(steps, mean, color=colour, linestyle=style, label=label)[0]
        if count > 1:
            axes.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    axes.set_xscale(xscale)
    if ylim is not None:
        axes.set_ylim(*ylim)
    axes.set_xlabel(x_label)
    axes.set_ylabel(tag.split("/")[-1] if len(tag) > 40 else tag)
    axes.set_title(title or tag, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the axes, off the curves
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return lines
