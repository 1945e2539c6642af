"""docs/results.md's real-Pong section: the per-epoch table of the SimPLe run on real Pong
(rlmb_pong_cpu) beside its random baseline, and their figure, from their archived records
(DOCS/results/runs/pong, archived by `minatar_results --pong_runs=DIR`)."""

import glob
import json
import os
import subprocess
import sys

from rlkit.rl.analysis.run_archive import TAG, epoch_summaries
from rlkit.rl.analysis.tables import markdown_table, metric

PONG_BEGIN, PONG_END = "<!-- pong:begin -->", "<!-- pong:end -->"
PONG_RUNS = ("simple_pong_cpu", "random")
# The evaluation cells of the Pong table: (sampling temperature, max no-ops, column title)
PONG_CELLS = ((1.0, 0, "temperature 1"), (1.0, 8, "temperature 1, 8 no-ops"), (0.5, 8, "temperature 0.5, 8 no-ops"),
              (0.0, 0, "temperature 0"))


def cell(results, temperature, noops):
    """A Pong evaluation cell's mean return (32 episodes) and its standard deviation over episodes."""
    result = results.get(f"sampling_temp_{temperature}_max_noops_{noops}")
    if result is None:  # a set that evaluates other cells
        return "—"
    return f"{result['mean_unclipped']:.2f} ± {result['std_unclipped']:.2f}"


def pong_section(archive_dir, docs_dir):
    """The real-Pong run's per-epoch table and figure, from the archive; None before its first epoch."""
    runs = sorted(glob.glob(os.path.join(archive_dir, "simple_pong_cpu_s*")))
    randoms = sorted(glob.glob(os.path.join(archive_dir, "random_s*")))
    if not runs:
        return None
    header = (["run", "epoch", "real steps"] + [title for _, _, title in PONG_CELLS]
              + ["reward accuracy at 12", "at 50", "pixel accuracy", "minutes"])
    rows = []
    for run in randoms:
        results = json.load(open(os.path.join(run, "summary.json")))["results"]["random"]
        rows.append([os.path.basename(run), "—", "—"] + [cell(results, t, n) for t, n, _ in PONG_CELLS]
                    + ["—"] * 4)
    for run in runs:
        for summary in epoch_summaries(run):
            model = summary["world_model"]
            rows.append([os.path.basename(run), summary["epoch"], f"{summary['real_env_steps']:,}"]
                        + [cell(summary["policy"], t, n) for t, n, _ in PONG_CELLS]
                        + [metric(model, "reward_accuracy/at_12"), metric(model, "reward_accuracy/at_50"),
                           f"{model['pixel_accuracy']:.4f}", f"{sum(summary['stage_seconds'].values()) / 60:.0f}"])
    output = os.path.join(docs_dir, "results", "pong_cpu.png")
    subprocess.run([sys.executable, "-m", "rlkit.rl.plot", f"--logdir={','.join(runs + randoms)}", f"--tag={TAG}",
                    f"--output={output}", "--ylim=-21,-18",  # the 32-episode means' noise in view, not magnified
                    "--title=Pong, rlmb_pong_cpu: evaluation return (temperature 1, 32 episodes)"], check=True)
    return "\n".join([markdown_table(header, rows), "", f"![SimPLe on real Pong](results/{os.path.basename(output)})"])
