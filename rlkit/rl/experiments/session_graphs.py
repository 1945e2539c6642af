"""A run's session graphs and standardised summary, read from its TensorBoard event files:

    RUN/graphs/return.png        evaluation returns (each sampling temperature) and the training
                                 episodes' returns, against real env steps
    RUN/graphs/<dir>_<loss>.png  each `losses/` scalar of the learner (loss, policy_loss,
                                 value_loss, entropy, ...), of the learner inside the world model
                                 and of the world model in a SimPLe loop run
    RUN/graphs/summary.json      the measures below

The measures, of the run's main evaluation return (the policy's own sampling, temperature 1, the
one policy/best is chosen by):

    final_return, best_return (and the real env steps of each); mean_return_over_run: the area
    under the return curve (trapezoids over real env steps) divided by the steps it spans;
    steps_to_solved: the first evaluation at or above the set's `solved_return`, if it has one;
    stability: the mean, standard deviation, min and max of the last (up to) 5 evaluations.

Drawn with the plot command's functions (rlkit.rl.plot), so they look like its figures.
"""

import json
import os

import numpy as np

from rlkit.fileio import atomic_write_text
from rlkit.rl.experiments import curves
from rlkit.rl.loops.evaluation import config_name, eval_grid

EVAL_DIRS = ("eval", "eval_metrics")  # model-free runs, SimPLe loop runs
LOSS_DIRS = ("train", "policy/simulated", "world_model/train")
TRAINING_RETURN = "charts/episodic_return"
STABILITY_EVALUATIONS = 5


def return_tag(temperature, max_noops):
    return f"mean_reward/eval/{config_name(temperature, max_noops)}_unclipped"


def main_return_tag(hparams):
    """The evaluation return a run is judged by: at temperature 1 (the policy's own sampling) with
    the set's no-ops, else the first evaluated cell's (as evaluation.main_return)."""
    grid = eval_grid(hparams)
    temperature, max_noops = next(((t, n) for t, n in grid if t == 1.0), grid[0])
    return return_tag(temperature, max_noops)


def summarize(steps, returns, solved_return=None, last=STABILITY_EVALUATIONS):
    """The standardised measures of a return curve (see the module's doc)."""
    steps, returns = np.asarray(steps, np.float64), np.asarray(returns, np.float64)
    best = int(np.argmax(returns))
    span = steps[-1] - steps[0]
    # np.trapz is gone from numpy 2's main namespace: the trapezoids, written out.
    area = float(np.sum((returns[1:] + returns[:-1]) / 2 * np.diff(steps)))
    solved = np.flatnonzero(returns >= solved_return) if solved_return is not None else []
    tail = returns[-last:]
    return dict(
        evaluations=len(returns),
        final_return=float(returns[-1]), final_step=int(steps[-1]),
        best_return=float(returns[best]), best_step=int(steps[best]),
        return_auc=area,
        mean_return_over_run=area / span if span > 0 else float(returns[-1]),
        solved_return=solved_return,
        steps_to_solved=int(steps[solved[0]]) if len(solved) else None,
        stability=dict(evaluations=len(tail), mean=float(tail.mean()), std=float(tail.std()),
                       min=float(tail.min()), max=float(tail.max())),
    )


def _one_run(steps, values):
    return steps, values, values, values, 1


def write_session_graphs(run_dir, hparams):
    """Draws RUN/graphs/*.png and writes RUN/graphs/summary.json; returns the summary (None, and
    no graphs, if the run has no evaluation yet)."""
    dirs = curves.event_dirs(run_dir)
    eval_dir = next((dirs[name] for name in EVAL_DIRS if name in dirs), None)
    main_series = curves.read_scalar(eval_dir, main_return_tag(hparams)) if eval_dir else None
    if main_series is None:
        return None
    graphs_dir = os.path.join(run_dir, "graphs")
    drawn = []
    returns = {}
    training = curves.read_scalar(dirs["train"], TRAINING_RETURN) if "train" in dirs else None
    if training is not None:  # first, so the evaluations are drawn over its many points
        returns["training episodes"] = _one_run(*training)
    for temperature, max_noops in eval_grid(hparams):
        series = curves.read_scalar(eval_dir, return_tag(temperature, max_noops))
        if series is not None:
            returns[f"evaluation, {config_name(temperature, max_noops)}"] = _one_run(*series)
    curves.draw(returns, "return", os.path.join(graphs_dir, "return.png"), title=f"{hparams.game}: return")
    drawn.append("return.png")
    for subdir in LOSS_DIRS:
        if subdir not in dirs:
            continue
        for tag in curves.all_tags(dirs[subdir]):
            if not tag.startswith("losses/"):
                continue
            name = f"{subdir.replace('/', '_')}_{tag.split('/', 1)[1]}.png"
            curves.draw({subdir: _one_run(*curves.read_scalar(dirs[subdir], tag))}, tag, os.path.join(graphs_dir, name),
                      x_label=curves.STEP_UNITS.get(subdir, "step"), title=f"{hparams.game}: {subdir} {tag}")
            drawn.append(name)
    summary = dict(return_tag=main_return_tag(hparams), **summarize(*main_series, hparams.get("solved_return")),
                   graphs=drawn)
    atomic_write_text(os.path.join(graphs_dir, "summary.json"), json.dumps(summary, indent=2) + "\n")
    return summary
