"""docs/results.md's tables and figures from the runs of scripts/minatar_experiment.sh.

    python scripts/minatar_results.py --runs=RUNS [--docs=docs]

Reads every run's evaluation events (the same tag for every method), writes the tables between
the `<!-- results:begin -->` and `<!-- results:end -->` lines of DOCS/results.md, and draws one
figure per game with the plot command (DOCS/results/minatar_GAME.png). Runs still going are
counted with what they have evaluated so far and marked.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

from rlkit.rl import plot

GAMES = ("breakout", "freeway", "asterix", "seaquest", "space_invaders")
# (directory prefix, label)
METHODS = (("simple_100k", "SimPLe @100K"), ("simple_ends_100k", "SimPLe + episode ends @100K"),
           ("ppo_100k", "PPO @100K"), ("ppo_1m", "PPO @1M"), ("random", "random"))
TAG = "mean_reward/eval/sampling_temp_1.0_max_noops_0_unclipped"
GREEDY_TAG = "mean_reward/eval/sampling_temp_0.0_max_noops_0_unclipped"
RESUME_GAP_SECONDS = 300  # longer pauses between a run's events are kills and resumes, not work
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def finished(run):
    """Whether the run ended: the loop's last epoch evaluated, the model-free policy exported, the
    random baseline's summary written."""
    hparams = os.path.join(run, "hparams.json")
    if os.path.exists(os.path.join(run, "eval_metrics")) and os.path.exists(hparams):
        return os.path.exists(os.path.join(run, "eval_metrics", f"epoch_{json.load(open(hparams))['epochs'] - 1}.json"))
    return any(os.path.exists(os.path.join(run, name)) for name in ("policy/saved_model.pb", "summary.json"))


def final_point(run, tag):
    """(real env steps, value) of the run's last evaluation at `tag`."""
    _, steps, values = plot.run_series(run, run, tag)
    return int(steps[-1]), float(values[-1])


def wall_seconds(run):
    """Seconds the run worked: the loop's stage times, or the model-free trainer's event times
    without the pauses of kills and resumes."""
    epochs = sorted(glob.glob(os.path.join(run, "eval_metrics", "epoch_*.json")))
    if epochs:
        return sum(sum(json.load(open(path)).get("stage_seconds", {}).values()) for path in epochs)
    train = os.path.join(run, "train")
    if not os.path.isdir(train):
        return None
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(train, size_guidance={"tensors": 0})
    events.Reload()
    times = np.sort([e.wall_time for tag in events.Tags()["tensors"] for e in events.Tensors(tag)])
    gaps = np.diff(times)
    return float(gaps[gaps < RESUME_GAP_SECONDS].sum()) if len(times) > 1 else None


def world_model_metrics(run):
    """The SimPLe run's last held-out world-model evaluation."""
    epochs = sorted(glob.glob(os.path.join(run, "eval_metrics", "epoch_*.json")),
                    key=lambda p: int(re.search(r"epoch_(\d+)", p).group(1)))
    if not epochs:
        return None
    summary = json.load(open(epochs[-1]))
    return dict(summary["world_model"], epoch=len(epochs) - 1)


def mean_std(values, digits=2):
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1):.{digits}f}"


def game_rows(runs_dir, game):
    """(table rows, SimPLe runs' world-model metrics, the runs evaluated so far) of one game."""
    rows, world_models, evaluated = [], [], []
    for prefix, label in METHODS:
        runs = sorted(p for p in glob.glob(os.path.join(runs_dir, game, f"{prefix}_s*")) if os.path.isdir(p))
        if not runs:
            continue
        finals, greedy, steps, seconds, unfinished = [], [], [], [], 0
        for run in runs:
            try:
                step, value = final_point(run, TAG)
            except Exception:  # no evaluation yet
                unfinished += 1
                continue
            finals.append(value)
            evaluated.append(run)
            greedy.append(final_point(run, GREEDY_TAG)[1])
            steps.append(step)
            unfinished += not finished(run)
            if (wall := wall_seconds(run)) is not None:
                seconds.append(wall)
            if prefix.startswith("simple") and (metrics := world_model_metrics(run)):
                world_models.append((os.path.basename(run), metrics))
        note = f" ({unfinished} of {len(runs)} running)" if unfinished else ""
        rows.append([game, label, f"{len(finals)}{note}", mean_std(finals), mean_std(greedy),
                     f"{int(np.mean(steps)):,}" if steps and prefix != "random" else "—",
                     duration(np.mean(seconds)) if seconds else "—"])
    return rows, world_models, evaluated


def duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def metric(metrics, name):
    """A world-model metric, or a dash where the held-out episodes were too short to measure it."""
    return f"{metrics[name]:.3f}" if name in metrics else "— (episodes too short)"


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def draw(runs, game, docs_dir):
    output = os.path.join(docs_dir, "results", f"minatar_{game}.png")
    subprocess.run([sys.executable, "-m", "rlkit.rl.plot", f"--logdir={','.join(runs)}", f"--tag={TAG}",
                    f"--output={output}", "--xscale=log",
                    f"--title=MinAtar {game}: evaluation return (temperature 1, 32 episodes)"], check=True)
    return output


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", required=True)
    parser.add_argument("--docs", default="docs")
    args = parser.parse_args()
    rows, world_models, figures = [], [], []
    for game in GAMES:
        if not os.path.isdir(os.path.join(args.runs, game)):
            continue
        game_table, models, evaluated = game_rows(args.runs, game)
        rows += game_table
        world_models += [(game, name, m) for name, m in models]
        if evaluated:
            figures.append((game, draw(evaluated, game, args.docs)))
    text = [markdown_table(["game", "method", "runs", "return, temperature 1", "return, temperature 0",
                            "real steps", "wall time per run"], rows), "",
            "World models of the SimPLe runs, on the held-out collection after their last epoch (reward accuracy: "
            "SimPLe's, the share of 128 rollouts whose predicted cumulative reward is right after N steps):", "",
            markdown_table(["game", "run", "epoch", "pixel accuracy", "reward accuracy at 12", "at 50"],
                           [[g, n, m["epoch"], f"{m['pixel_accuracy']:.4f}", metric(m, "reward_accuracy/at_12"),
                             metric(m, "reward_accuracy/at_50")] for g, n, m in world_models]), ""]
    text += [f"![MinAtar {game}](results/{os.path.basename(path)})" for game, path in figures]
    path = os.path.join(args.docs, "results.md")
    document = open(path).read()
    start, end = document.index(BEGIN) + len(BEGIN), document.index(END)
    with open(path, "w") as f:
        f.write(document[:start] + "\n" + "\n".join(text) + "\n" + document[end:])
    print("\n".join(text))


if __name__ == "__main__":
    main()
