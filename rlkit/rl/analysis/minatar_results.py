"""docs/results.md's tables and figures from the runs of scripts/minatar_experiment.sh, and from
the real-Pong run (rlmb_pong_cpu) with its random baseline.

    python -m rlkit.rl.analysis.minatar_results --runs=RUNS [--pong_runs=PONG_RUNS] [--docs=docs]
    python -m rlkit.rl.analysis.minatar_results --runs=RUNS --pending    # a cell's reruns, as they finish
    python -m rlkit.rl.analysis.minatar_results --promote=GAME/PREFIX    # once they all have

Each run's evaluation record is first archived into DOCS/results/runs/GAME/RUN
(rlkit.rl.analysis.run_archive: its evaluation event files, the loop's per-epoch JSON, its
hparams.json, run.json and command.txt, and run_info.json). A run replaces its archived
copy only when it has evaluated at least as often, so a run restarted on a fresh machine never
overwrites a longer record. The tables (between the `<!-- results:begin -->` and
`<!-- results:end -->` lines of DOCS/results.md) and one figure per game
(DOCS/results/minatar_GAME.png, drawn with the plot command) are then made from the archive
alone: without --runs the script redraws them from what earlier sessions archived. A cell
counts a method's finished runs (a run still going only where none has finished: `counted_runs`).
Long evaluations (RUNS/GAME/long_eval/RUN, the experiment script's ONLY=long_eval) are archived
as the run's long_eval.json and make the evaluation-noise table between `<!-- noise:begin -->`
and `<!-- noise:end -->`.
--pong_runs (a dir holding simple_pong_cpu_s* and random_s*) is archived into
DOCS/results/runs/pong alike, and makes (rlkit.rl.analysis.pong_results) the per-epoch table
between `<!-- pong:begin -->` and `<!-- pong:end -->` and DOCS/results/pong_cpu.png.
A rerun that is to replace a cell's archived runs is kept with --pending instead: once finished,
in DOCS/results/pending/GAME/RUN, which no table reads, so a machine lost before the cell's other
seeds finish loses none of it (a line per cell says what waits there, whether --promote would
take it and which of the protocol's seeds are still to come); --promote=GAME/PREFIX then moves
the cell's pending runs into the archive together (refused where the cell would mix code
versions) and makes the tables.
--prefixes=dreamer_1m,... archives (or keeps pending) only those methods' runs of --runs.
DOCS/results.md's Status (between `<!-- status:begin -->` and `<!-- status:end -->`) counts each
reported cell's finished runs against the seeds the experiment script's protocol asks
(rlkit.rl.analysis.protocol), with those waiting in pending.
The README beside DOCS gets the summary of the reported cells between `<!-- summary:begin -->`
and `<!-- summary:end -->`, where it has them. DOCS/off_policy.md gets the DQN column's runs seed
by seed, each beside the same seed's run before the replay fix, between `<!-- dqn-rerun:begin -->`
and `<!-- dqn-rerun:end -->`.
"""

import collections
import json
import os
import subprocess
import sys

import numpy as np
from absl import flags

from rlkit.errors import UserError, did_you_mean, run_command
from rlkit.rl.analysis import statistics
from rlkit.rl.analysis.cells import (BEST_SIMPLE, GAMES, METHODS, REPORTED, SELECTION_SEEDS, best_simple_runs,
                                    reported_methods, simple_sets)
from rlkit.rl.analysis.evaluation_noise import noise_table
from rlkit.rl.analysis.pong_results import PONG_BEGIN, PONG_END, PONG_RUNS, pong_section
from rlkit.rl.analysis.protocol import protocol_seeds, status_section
from rlkit.rl.analysis.run_archive import (TAG, archive, archived_runs, code_versions, counted_runs, epoch_summaries,
                                          evaluations, final_evaluations, keep_pending, pending_cells, promote, seed_of)
from rlkit.rl.analysis.tables import duration, markdown_table, mean_interval, metric, noise, replace_between
from rlkit.rl.experiments import curves

WITHOUT_SELECTION = ", selection seeds left out"
BASELINE, REFERENCE = "PPO @100K", "PPO @1M"
# The methods every other one's probability of improvement is given against, where run on every game.
COMPARED_WITH = (BASELINE, "DQN (data-efficient) @100K", BEST_SIMPLE, "DreamerV2 @100K")
STATS_BEGIN, STATS_END = "<!-- statistics:begin -->", "<!-- statistics:end -->"
NOISE_BEGIN, NOISE_END = "<!-- noise:begin -->", "<!-- noise:end -->"
STATUS_BEGIN, STATUS_END = "<!-- status:begin -->", "<!-- status:end -->"
GREEDY_TAG = "mean_reward/eval/sampling_temp_0.0_max_noops_0_unclipped"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
# README.md's summary (beside the docs dir): each game's SimPLe set, then these methods' cells.
SUMMARY_BEGIN, SUMMARY_END = "<!-- summary:begin -->", "<!-- summary:end -->"
SUMMARY_METHODS = (("simple_combined_100k", "SimPLe, one set @100K"), ("dreamer_100k", "DreamerV2 @100K"),
                   ("dreamer_v3_100k", "DreamerV3 @100K"), ("ppo_100k", "PPO @100K"), ("dqn_100k", "DQN @100K"),
                   ("ppo_1m", "PPO @1M"), ("random", "random"))
# docs/off_policy.md's per-seed table of the DQN column's runs since the replay fix (issue 66).
DQN_RERUN_BEGIN, DQN_RERUN_END = "<!-- dqn-rerun:begin -->", "<!-- dqn-rerun:end -->"


def world_model_metrics(run):
    """The SimPLe run's last held-out world-model evaluation."""
    epochs = epoch_summaries(run)
    if not epochs:
        return None
    return dict(epochs[-1]["world_model"], epoch=len(epochs) - 1)


# One game's archived runs: the rows of its reported cells and of the sets tried and ablations,
# the SimPLe runs' world-model metrics, and every run evaluated (the curves show them all).
GameRows = collections.namedtuple("GameRows", "reported tried world_models evaluated")


def game_rows(archive_dir, game):
    """`GameRows` of one game's archived runs."""
    reported, tried, world_models, evaluated = [], [], [], []
    reported_prefixes = {prefix for prefix, _ in reported_methods(game)}
    for prefix, label in METHODS:
        runs = archived_runs(archive_dir, game, prefix)
        if not runs:
            continue
        evaluated += runs
        world_models += [(os.path.basename(run), metrics) for run in runs
                         if prefix.startswith("simple") and (metrics := world_model_metrics(run))]
        rows = reported if prefix in reported_prefixes else tried
        counted, left_out = counted_runs(runs)
        rows.append(method_row(game, label, counted, left_out, real_steps=prefix != "random"))
        unseen = without_selection_seeds(game, prefix, counted)
        if len(unseen) < len(counted):
            seeds = SELECTION_SEEDS[(game, prefix)]
            named = (f"seed {seeds[0]} (its set's choice saw it)" if len(seeds) == 1
                     else f"seeds {', '.join(map(str, seeds))} (its set's choice saw them)")
            rows.append(method_row(game, f"{label} without {named}", unseen, 0))
    return GameRows(reported, tried, world_models, evaluated)


def method_row(game, label, counted, left_out, real_steps=True):
    """A results-table row of the runs `counted` (with `left_out` unfinished runs named beside the count)."""
    if not counted:
        return [game, label, "0", *["—"] * 6]
    finals, errors, long_episodes = final_evaluations(counted)
    greedy, steps, seconds, unfinished = [], [], [], 0
    for run in counted:
        info = json.load(open(os.path.join(run, "run_info.json")))
        greedy.append(float(curves.run_series(run, run, GREEDY_TAG)[2][-1]))
        steps.append(evaluations(run)[-1][0])
        unfinished += not info["finished"]
        if info["wall_seconds"] is not None:
            seconds.append(info["wall_seconds"])
    note = (f" (+{left_out} unfinished, not counted)" if left_out
            else f" ({unfinished} unfinished)" if unfinished else "")
    if long_episodes:
        note += f" ({long_episodes:,} episodes)"
    return [game, label, f"{len(finals)}{note}", mean_interval(finals), mean_interval(greedy),
            noise(finals, errors), f"{int(np.mean(steps)):,}" if real_steps else "—",
            duration(np.mean(seconds)) if seconds else "—", code_versions(counted)]


def seed_table(archive_dir, prefix, before_prefix):
    """A markdown table of each archived run of `prefix`, game by game in seed order: its
    evaluations at temperature 1 during the run (the last in bold), and the last of the same
    game and seed's run of `before_prefix` (the same set, run before a fix). '' where none."""
    rows, steps = [], []
    for game in GAMES:
        before = {seed_of(run): run for run in archived_runs(archive_dir, game, before_prefix)}
        for run in archived_runs(archive_dir, game, prefix):
            record = evaluations(run)
            steps = max(steps, [step for step, _ in record], key=len)
            values = [f"{value:.2f}" for _, value in record]
            values[-1] = f"**{values[-1]}**"
            earlier = evaluations(before[seed_of(run)]) if seed_of(run) in before else []
            rows.append([game, str(seed_of(run)), ", ".join(values), f"{earlier[-1][1]:.2f}" if earlier else "—"])
    if not rows:
        return ""
    at = ", ".join(f"{round(step / 1000)}K" for step in steps)
    return markdown_table(["game", "seed", f"evaluations at {at}", f"`{before_prefix}`, last"], rows)


def without_selection_seeds(game, prefix, runs):
    """`runs` less those whose seeds the choice of their set saw (`SELECTION_SEEDS`)."""
    return [run for run in runs if seed_of(run) not in SELECTION_SEEDS.get((game, prefix), ())]


def final_returns(archive_dir, game, prefix, leave_out_selection_seeds=False):
    """The final returns (temperature 1) of a game's archived runs of one method that its table
    cell counts (`counted_runs`), in seed order: `final_evaluations`' returns; without the seeds
    its set was chosen on where asked."""
    runs = counted_runs(archived_runs(archive_dir, game, prefix))[0]
    if leave_out_selection_seeds:
        runs = without_selection_seeds(game, prefix, runs)
    return final_evaluations(runs)[0]


def statistics_section(archive_dir, docs_dir, reps=10_000):
    """Across the five games: IQM and optimality gap of normalised scores (random 0, PPO@1M 1) with
    stratified-bootstrap CIs, the probability of improving on each of `COMPARED_WITH`, and the performance
    profile and interval plots; for the methods run on every game. `reps`: the bootstrap's
    resamples (at most 2,000 for the probabilities and the profile). The reported sets alone (`REPORTED`)."""
    labels = dict(METHODS)
    prefixes = {label: {game: prefix for game in GAMES} for prefix, label in METHODS if prefix in REPORTED}
    prefixes[BEST_SIMPLE] = best_simple_runs()
    returns = {label: [final_returns(archive_dir, game, by_game[game]) for game in GAMES]
               for label, by_game in prefixes.items()}
    for label, by_game in prefixes.items():  # the same without the seeds a set was chosen on
        if any((game, by_game[game]) in SELECTION_SEEDS for game in GAMES):
            returns[label + WITHOUT_SELECTION] = [final_returns(archive_dir, game, by_game[game], True)
                                                  for game in GAMES]
    complete = {label: r for label, r in returns.items() if all(r)}
    if labels["random"] not in complete or REFERENCE not in complete or BASELINE not in complete:
        return None
    random_means = np.array([np.mean(r) for r in complete[labels["random"]]])
    reference_means = np.array([np.mean(r) for r in complete[REFERENCE]])
    scores = {}
    for label, per_game in complete.items():
        runs = min(len(r) for r in per_game)  # rliable's matrices: as many runs on every game
        matrix = np.array([r[:runs] for r in per_game]).T
        scores[f"{label} ({runs})"] = statistics.normalised(matrix, random_means, reference_means)
    aggregate = statistics.aggregates(scores, reps=reps)
    # P(a run of the row's method beats a run of the column's on a random game), for each of the
    # compared methods run on every game.
    compared = [(label, name) for label in COMPARED_WITH for name in scores if name.startswith(label + " (")]
    improvement = {name: statistics.improvement_probabilities(scores, name, reps=min(reps, 2000))
                   for _, name in compared}
    rows = [[m, *(f"{a[n][0]:.2f} [{a[n][1]:.2f}, {a[n][2]:.2f}]" for n in ("IQM", "optimality gap")),
             *("—" if m == name else "{:.2f} [{:.2f}, {:.2f}]".format(*improvement[name][m]) for _, name in compared)]
            for m, a in aggregate.items()]
    figures = [os.path.join(docs_dir, "results", f"minatar_{kind}.png") for kind in ("profile", "intervals")]
    statistics.draw(scores, aggregate, *figures, REFERENCE, reps=min(reps, 2000))
    header = ["method (runs per game)", "IQM", "optimality gap", *(f"P(improves on {label})" for label, _ in compared)]
    return "\n".join([markdown_table(header, rows), "",
                      *(f"![{kind}](results/{os.path.basename(path)})" for kind, path in
                        zip(("performance profile", "IQM and optimality gap"), figures))])


def summary_section(archive_dir):
    """The front page's table (README.md): each game's reported cells, the final return at
    temperature 1 as 'mean [95% CI] (runs)', the best mean at 100K real steps in bold; '—' where no
    run of the method has been archived on the game (a cell's reruns wait in pending until all
    its seeds are in)."""
    columns = [(None, "SimPLe, each game's set @100K")] + list(SUMMARY_METHODS)  # None: the game's own set
    sets = simple_sets()
    rows = []
    for game in GAMES:
        returns = [final_returns(archive_dir, game, prefix or sets[game][1]) for prefix, _ in columns]
        at_100k = [i for i, (prefix, _) in enumerate(columns) if (prefix or "_100k").endswith("_100k") and returns[i]]
        best = max(at_100k, key=lambda i: np.mean(returns[i]), default=None)
        cells = [f"{mean_interval(r)} ({len(r)})" if r else "—" for r in returns]
        if best is not None:
            cells[best] = f"**{mean_interval(returns[best])}** ({len(returns[best])})"
        rows.append([f"{game} (`{sets[game][0]}`)", *cells])
    return markdown_table(["game (its SimPLe set)", *(label for _, label in columns)], rows)


def noise_section(archive_dir):
    """The noise table (rlkit.rl.analysis.evaluation_noise) of the reported cells: each game's
    SimPLe set and `REPORTED`."""
    return noise_table(archive_dir, [(game, prefix, label) for game in GAMES for prefix, label in reported_methods(game)])


def read_or_empty(path):
    return open(path).read() if os.path.isfile(path) else ""


def draw(runs, game, docs_dir):
    output = os.path.join(docs_dir, "results", f"minatar_{game}.png")
    subprocess.run([sys.executable, "-m", "rlkit.rl.plot", f"--logdir={','.join(runs)}", f"--tag={TAG}",
                    f"--output={output}", "--xscale=log",
                    f"--title=MinAtar {game}: evaluation return (temperature 1, 32 episodes)"], check=True)
    return output


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("runs", None, "the experiment's runs, archived first (default: the archive alone)")
    flags.DEFINE_string("pong_runs", None, "the real-Pong run and its random baseline, archived first")
    flags.DEFINE_string("docs", "docs", "the docs dir: results.md, its figures and the archive in results/runs")
    flags.DEFINE_list("prefixes", [], "with --runs: archive (or keep pending) only the runs of these methods' run "
                      "prefixes, such as dreamer_1m (default: every method's)")
    flags.DEFINE_bool("pending", False, "with --runs: finished runs go to results/pending/GAME (no table reads "
                      "them) rather than the archive, and no table is made")
    flags.DEFINE_list("promote", [], "GAME/PREFIX,...: these cells' pending runs replace their archived seeds "
                      "(refused where the cell would mix code versions), then the tables are made")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    all_prefixes = [prefix for prefix, _ in METHODS]
    unknown = [prefix for prefix in FLAGS.prefixes if prefix not in all_prefixes]
    if unknown:
        raise UserError(f"--prefixes: no method's runs are named {unknown[0]}_sSEED"
                        + did_you_mean(unknown[0], all_prefixes))
    for flag, runs in (("--runs", FLAGS.runs), ("--pong_runs", FLAGS.pong_runs)):
        if runs and not os.path.isdir(runs):
            raise UserError(f"{flag}={runs!r} does not exist: give the RUNS dir scripts/minatar_experiment.sh wrote")
    if not os.path.isfile(os.path.join(FLAGS.docs, "results.md")):
        raise UserError(f"--docs={FLAGS.docs!r} has no results.md: run this from the repository's root, or give "
                        "--docs=DIR, its docs dir")
    archive_dir, pending_dir = (os.path.join(FLAGS.docs, "results", name) for name in ("runs", "pending"))
    prefixes = FLAGS.prefixes or all_prefixes
    if FLAGS.pending:
        if not FLAGS.runs:
            raise UserError("--pending keeps the finished runs of --runs: give --runs=DIR as well")
        for game in GAMES:
            keep_pending(*(os.path.join(d, game) for d in (FLAGS.runs, pending_dir, archive_dir)), prefixes)
        protocol = protocol_seeds()
        for game in GAMES:
            asked = {prefix: seeds for (of_game, prefix), seeds in protocol.items() if of_game == game}
            for line in pending_cells(os.path.join(pending_dir, game), os.path.join(archive_dir, game), game, asked):
                print(line)
        return
    for cell in FLAGS.promote:
        game, _, prefix = cell.partition("/")
        if game not in GAMES or prefix not in all_prefixes:
            raise UserError(f"--promote={cell}: give GAME/PREFIX, a game of {', '.join(GAMES)} and a method's "
                            "run prefix such as dreamer_100k")
        promote(os.path.join(pending_dir, game), os.path.join(archive_dir, game), prefix)
    for game in GAMES if FLAGS.runs else ():
        archive(os.path.join(FLAGS.runs, game), os.path.join(archive_dir, game), prefixes)
    if FLAGS.pong_runs:
        archive(FLAGS.pong_runs, os.path.join(archive_dir, "pong"), PONG_RUNS)
    reported, tried, world_models, figures = [], [], [], []
    for game in GAMES:
        if not os.path.isdir(os.path.join(archive_dir, game)):
            continue
        rows = game_rows(archive_dir, game)
        reported += rows.reported
        tried += rows.tried
        world_models += [(game, name, m) for name, m in rows.world_models]
        if rows.evaluated:
            figures.append((game, draw(rows.evaluated, game, FLAGS.docs)))
    header = ["game", "method", "runs", "return, temperature 1", "return, temperature 0", "evaluation SE / seed std",
              "real steps", "wall time per run", "code (commits)"]
    text = [markdown_table(header, reported), ""]
    if tried:
        text += ["Not reported cells, and in no across-games statistic: the SimPLe sets tried on a game's seed 0 "
                 "before its set was chosen (the journal, [results_journal.md](results_journal.md), has each "
                 "choice), DreamerV2's ablations and variant, and DQN@100K before its replay fix.", "",
                 markdown_table(header, tried), ""]
    text += ["World models of the SimPLe runs, on the held-out collection after their last epoch (reward accuracy: "
             "SimPLe's, the share of 128 rollouts whose predicted cumulative reward is right after N steps):", "",
             markdown_table(["game", "run", "epoch", "pixel accuracy", "reward accuracy at 12", "at 50"],
                            [[g, n, m["epoch"], f"{m['pixel_accuracy']:.4f}", metric(m, "reward_accuracy/at_12"),
                              metric(m, "reward_accuracy/at_50")] for g, n, m in world_models]), ""]
    text += [f"![MinAtar {game}](results/{os.path.basename(path)})" for game, path in figures]
    # Every section is written before any is printed: a reader that stops early (`| head`) ended the
    # command at its first print, leaving the sections after it as they were.
    path, off_policy = (os.path.join(FLAGS.docs, name) for name in ("results.md", "off_policy.md"))
    readme = os.path.join(FLAGS.docs, os.pardir, "README.md")
    sections = [(path, BEGIN, END, "\n".join(text)),
                (readme, SUMMARY_BEGIN, SUMMARY_END,
                 summary_section(archive_dir) if SUMMARY_BEGIN in read_or_empty(readme) else None),
                (path, STATS_BEGIN, STATS_END, statistics_section(archive_dir, FLAGS.docs)),
                (path, NOISE_BEGIN, NOISE_END, noise_section(archive_dir)),
                (path, STATUS_BEGIN, STATUS_END, status_section(archive_dir, pending_dir, protocol_seeds())
                 if STATUS_BEGIN in read_or_empty(path) else None),
                (off_policy, DQN_RERUN_BEGIN, DQN_RERUN_END,
                 seed_table(archive_dir, "dqn_100k", "dqn_shard_replay_100k") if os.path.exists(off_policy) else None),
                (path, PONG_BEGIN, PONG_END, pong_section(os.path.join(archive_dir, "pong"), FLAGS.docs))]
    written = [(doc, begin, end, section) for doc, begin, end, section in sections if section]
    for doc, begin, end, section in written:
        replace_between(doc, begin, end, section)
    print("\n".join(section for *_, section in written))


if __name__ == "__main__":
    define_flags()
    run_command(main)
