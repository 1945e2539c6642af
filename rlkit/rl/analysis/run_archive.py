"""The evaluation record of a run, kept where the run itself cannot be: a machine may not
outlive a session and run directories are large (data, checkpoints). `archive_run` copies a run's
evaluation event files, the SimPLe loop's per-epoch JSON (world-model metrics, stage times), its
hparams.json, run.json and command.txt, and writes run_info.json (finished or not, evaluations,
wall time); rlkit.rl.analysis.minatar_results makes docs/results.md's tables from these copies.
A long evaluation of the run's final policy (the evaluator's summary.json, from the experiment
script's ONLY=long_eval) is kept beside them as long_eval.json. `archive` copies a directory's
runs into the archive, `keep_pending` a cell's finished reruns into pending (beside it, read by no
table), `pending_cells` says what waits there and `promote` moves a whole cell from pending into the
archive. The readers at the end give
the tables a method's archived runs, the ones a cell counts and their final evaluations, and a loop
run's per-epoch summaries.
"""

import filecmp
import glob
import json
import os
import re
import shutil

import numpy as np

from rlkit.errors import UserError
from rlkit.hparams import HParams, with_keys_added_later
from rlkit.rl.experiments import curves

TAG = "mean_reward/eval/sampling_temp_1.0_max_noops_0_unclipped"  # a run's main return: temperature 1
# summary.json: the random baseline's; provenance.json: the code that made the run (rlkit.provenance)
RUN_FILES = ("hparams.json", "run.json", "command.txt", "summary.json", "provenance.json")
EVAL_DIRS = ("eval_metrics", "eval")  # the loop's and the model-free trainer's evaluation events
LONG_EVALUATION = "long_eval.json"
# The final evaluation's spread over its episodes, where the run recorded it (since the
# 128-episode final evaluations; earlier runs' evaluations had 32 episodes and no record of it).
STD_TAG, EPISODES_TAG = ("episodes/eval/sampling_temp_1.0_max_noops_0_std_unclipped",
                         "episodes/eval/sampling_temp_1.0_max_noops_0_episodes")
RESUME_GAP_SECONDS = 300  # longer pauses between a run's events are kills and resumes, not work


def finished(run):
    """Whether a live run ended: the SimPLe loop's last epoch evaluated, the Dreamer loop's last
    step, the model-free policy exported, the random baseline's summary written."""
    hparams = os.path.join(run, "hparams.json")
    if os.path.exists(os.path.join(run, "eval_metrics")) and os.path.exists(hparams):
        with open(hparams) as f:
            saved = with_keys_added_later(HParams.from_json(f.read()))
        last = f"epoch_{saved.epochs - 1}" if saved.loop == "simple" else f"step_{saved.num_env_steps}"
        return os.path.exists(os.path.join(run, "eval_metrics", f"{last}.json"))
    return any(os.path.exists(os.path.join(run, name)) for name in ("policy/saved_model.pb", "summary.json"))


def finished_records(runs):
    """Those of archived (or pending) `runs` whose run_info.json says they finished."""
    return [run for run in runs if json.load(open(os.path.join(run, "run_info.json")))["finished"]]


def evaluations(run):
    """(real env steps, value) of each of a run's evaluations at TAG; [] before the first."""
    try:
        _, steps, values = curves.run_series(run, run, TAG)
    except Exception:  # no evaluation yet
        return []
    return list(zip(steps.tolist(), values.tolist()))


def wall_seconds(run):
    """Seconds a live run worked: the SimPLe loop's stage times, or the training event times of
    the model-free trainer (train/) or the Dreamer loop (world_model/train/) without the pauses
    of kills and resumes."""
    epochs = sorted(glob.glob(os.path.join(run, "eval_metrics", "epoch_*.json")))
    if epochs:
        return sum(sum(json.load(open(path)).get("stage_seconds", {}).values()) for path in epochs)
    train = next((path for path in (os.path.join(run, "train"), os.path.join(run, "world_model", "train"))
                  if os.path.isdir(path)), None)
    if train is None:
        return None
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(train, size_guidance={"tensors": 0})
    events.Reload()
    times = np.sort([e.wall_time for tag in events.Tags()["tensors"] for e in events.Tensors(tag)])
    gaps = np.diff(times)
    return float(gaps[gaps < RESUME_GAP_SECONDS].sum()) if len(times) > 1 else None


def archive_run(run, archived):
    """Copies a live run's evaluation record into `archived`, replacing an archived copy unless
    that has more evaluations and the live run has not finished (a rerun under way); returns
    whether it did. A finished rerun replaces it even with fewer: one killed during an evaluation
    before 93476e0 lacks that point, and a cell's runs must come from one commit."""
    points = evaluations(run)
    info_path = os.path.join(archived, "run_info.json")
    if not points or (os.path.exists(info_path) and json.load(open(info_path))["evaluations"] > len(points)
                      and not finished(run)):
        return False
    staging = archived + ".new"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    for name in RUN_FILES:
        if os.path.exists(os.path.join(run, name)):
            shutil.copy(os.path.join(run, name), staging)
    for name in EVAL_DIRS:
        if os.path.isdir(os.path.join(run, name)):  # its event files and per-epoch JSON, no subdirs
            os.makedirs(os.path.join(staging, name))
            for path in glob.glob(os.path.join(run, name, "*")):
                if os.path.isfile(path):
                    shutil.copy(path, os.path.join(staging, name))
    for path in glob.glob(os.path.join(run, "*tfevents*")):  # the random baseline's, at its top
        shutil.copy(path, staging)
    kept = os.path.join(archived, LONG_EVALUATION)
    if os.path.exists(kept) and evaluations(archived)[-1] == points[-1]:  # the same final policy's (a
        shutil.copy(kept, staging)  # run rerun elsewhere parts from it: then its long evaluation goes)
    info = dict(finished=finished(run), evaluations=len(points), wall_seconds=wall_seconds(run))
    with open(os.path.join(staging, "run_info.json"), "w") as f:
        json.dump(info, f, indent=2)
    shutil.rmtree(archived, ignore_errors=True)
    os.replace(staging, archived)
    return True


def archive_long_evaluation(summary, archived):
    """Copies the evaluator's `summary` of a run's long evaluation into its archived record
    `archived` as long_eval.json, once the run itself is archived; returns whether it did."""
    target = os.path.join(archived, LONG_EVALUATION)
    if not os.path.isdir(archived) or (os.path.exists(target) and filecmp.cmp(summary, target, shallow=False)):
        return False
    shutil.copy(summary, target + ".new")
    os.replace(target + ".new", target)
    return True


def archive(runs_dir, archive_dir, prefixes):
    """Archives each run RUNS_DIR/PREFIX_sSEED into ARCHIVE_DIR/PREFIX_sSEED, and its long
    evaluation RUNS_DIR/long_eval/PREFIX_sSEED (the experiment script's ONLY=long_eval) beside it."""
    for prefix in prefixes:
        for run in sorted(glob.glob(os.path.join(runs_dir, f"{prefix}_s*"))):
            if os.path.isdir(run) and archive_run(run, os.path.join(archive_dir, os.path.basename(run))):
                print(f"archived {run}")
        archive_long_evaluations(runs_dir, archive_dir, prefix)


def archive_long_evaluations(runs_dir, records_dir, prefix):
    """Copies each long evaluation RUNS_DIR/long_eval/PREFIX_sSEED beside its run's record in RECORDS_DIR."""
    for summary in sorted(glob.glob(os.path.join(runs_dir, "long_eval", f"{prefix}_s*", "summary.json"))):
        name = os.path.basename(os.path.dirname(summary))
        if archive_long_evaluation(summary, os.path.join(records_dir, name)):
            print(f"archived {os.path.dirname(summary)} into {os.path.join(records_dir, name)}")


def keep_pending(runs_dir, pending_dir, archive_dir, prefixes):
    """Archives each finished run RUNS_DIR/PREFIX_sSEED into PENDING_DIR/PREFIX_sSEED, where no
    table reads it, unless ARCHIVE_DIR or PENDING_DIR holds the same run already (the same provenance
    record and evaluations): a rerun that is to replace a cell waits there for its cell's other seeds, kept
    in the repository should the machine that made it be lost. A pending run's long evaluation joins it."""
    for prefix in prefixes:
        for run in sorted(glob.glob(os.path.join(runs_dir, f"{prefix}_s*"))):
            name = os.path.basename(run)
            if not (os.path.isdir(run) and finished(run)) or any(
                    same_run(run, os.path.join(kept, name)) for kept in (archive_dir, pending_dir)):
                continue
            if archive_run(run, os.path.join(pending_dir, name)):
                print(f"pending {run}")
        archive_long_evaluations(runs_dir, pending_dir, prefix)


def same_run(run, archived):
    """Whether ARCHIVED is RUN's record: the same provenance record and evaluations."""
    provenance = [os.path.join(path, "provenance.json") for path in (run, archived)]
    return (os.path.isdir(archived) and all(map(os.path.exists, provenance))
            and filecmp.cmp(*provenance, shallow=False) and evaluations(archived) == evaluations(run))


def promotion_refusal(pending_dir, archive_dir, prefix):
    """Why `promote` would refuse a cell's pending records (one line), or None where it would move
    them: one has not finished, or the cell would then mix code versions (its archived seeds made by
    other code are to be rerun first, or removed)."""
    pending = archived_runs(pending_dir, "", prefix)
    if not pending:
        return f"nothing pending in {pending_dir} for {prefix}: a finished run gets there with --pending"
    unfinished = [os.path.basename(run) for run in pending if run not in finished_records(pending)]
    if unfinished:
        return f"{', '.join(unfinished)} in {pending_dir} has not finished; let it finish, then --pending again"
    names = {os.path.basename(run) for run in pending}
    kept = [run for run in archived_runs(archive_dir, "", prefix) if os.path.basename(run) not in names]
    if code_versions(pending + kept).startswith("mixed"):
        others = [f"seed {seed_of(run)} {code_versions([run])}" for run in kept
                  if code_versions([run]) != code_versions(pending)]
        return (f"promoting {prefix} would mix code versions in {archive_dir}: pending {code_versions(pending)}, "
                f"archived {', '.join(others) or 'the same'}; rerun those seeds at one commit first")
    return None


def promote(pending_dir, archive_dir, prefix):
    """Moves a cell's pending records PENDING_DIR/PREFIX_sSEED into ARCHIVE_DIR, each replacing its
    seed's archived run, unless `promotion_refusal` finds a reason not to."""
    refusal = promotion_refusal(pending_dir, archive_dir, prefix)
    if refusal:
        raise UserError(refusal)
    os.makedirs(archive_dir, exist_ok=True)
    for run in archived_runs(pending_dir, "", prefix):
        archived = os.path.join(archive_dir, os.path.basename(run))
        shutil.rmtree(archived, ignore_errors=True)
        os.replace(run, archived)
        print(f"promoted {run} to {archived}")


def seeds_named(runs):
    """'seed 3' or 'seeds 0, 1, 2': the seeds of `runs`, for a line."""
    return seeds_named_from([seed_of(run) for run in runs])


def seeds_named_from(seeds):
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


def pending_cells(pending_dir, archive_dir, game, protocol):
    """A line per method with records in PENDING_DIR (one game's): its seeds, code and final returns,
    the archived seeds they would replace, and whether --promote would take them now: where it
    would, whether the cell would then have every seed `protocol` ({prefix: seeds}, the game's
    `rlkit.rl.analysis.protocol.protocol_seeds`) asks of it."""
    prefixes = sorted({os.path.basename(run).rsplit("_s", 1)[0]
                       for run in glob.glob(os.path.join(pending_dir, "*_s*")) if os.path.isdir(run)})
    lines = []
    for prefix in prefixes:
        pending = archived_runs(pending_dir, "", prefix)
        replaced = [run for run in archived_runs(archive_dir, "", prefix)
                    if os.path.basename(run) in {os.path.basename(p) for p in pending}]
        finals, _, episodes = final_evaluations(pending)
        line = (f"{game}/{prefix}: {seeds_named(pending)} pending ({code_versions(pending)}; final "
                f"{', '.join(f'{value:.2f}' for value in finals)}{f' on {episodes:,} episodes' if episodes else ''})")
        if replaced:
            line += f", replacing the archived {seeds_named(replaced)}"
        refusal = promotion_refusal(pending_dir, archive_dir, prefix)
        if refusal:
            lines.append(f"{line}; --promote would refuse: {refusal}")
            continue
        kept = [run for run in archived_runs(archive_dir, "", prefix) if run not in replaced]
        have = {seed_of(run) for run in finished_records(pending + kept)}
        missing = [seed for seed in protocol.get(prefix, []) if seed not in have]
        lines.append(f"{line}; " + (f"the protocol's {seeds_named_from(missing)} still to come, then" if missing
                                    else "every seed the protocol asks is in:") + f" --promote={game}/{prefix}")
    return lines


def evaluation_spread(run):
    """(spread over episodes, episodes) of a run's last evaluation at temperature 1, or None
    where the run did not record them."""
    try:
        std = curves.run_series(run, run, STD_TAG)[2][-1]
        episodes = curves.run_series(run, run, EPISODES_TAG)[2][-1]
    except Exception:  # an older run: no record
        return None
    return float(std), int(episodes)


def asked_episodes(runs):
    """The episodes each of `runs`' final evaluations played as its set asked: for runs that did
    not record them."""
    asked = []
    for run in runs:
        with open(os.path.join(run, "hparams.json")) as f:
            saved = json.load(f)
        asked.append(saved.get("final_eval_batch_size", saved["eval_batch_size"]))
    return asked


def evaluation_error(run):
    """The standard error of a run's last evaluation at temperature 1 (std / sqrt(episodes)),
    or None where the run did not record its episodes' spread."""
    spread = evaluation_spread(run)
    return None if spread is None else spread[0] / np.sqrt(spread[1])


def seed_of(run):
    """The seed of a run directory named PREFIX_sSEED."""
    return int(run.rsplit("_s", 1)[1])


def archived_runs(archive_dir, game, prefix):
    """The archived runs ARCHIVE_DIR/GAME/PREFIX_sSEED of one method, in seed order."""
    runs = [p for p in glob.glob(os.path.join(archive_dir, game, f"{prefix}_s*")) if os.path.isdir(p)]
    return sorted(runs, key=seed_of)


def counted_runs(runs):
    """(the runs a cell's statistics count, how many are left out): the finished runs, or where
    none has finished, those still going at their last evaluation, so that a run just started
    does not pull the cell of runs that went the whole way towards its first epoch."""
    done = finished_records(runs)
    return (done, len(runs) - len(done)) if done else (runs, 0)


def final_evaluations(runs):
    """(final returns at temperature 1, their standard errors, episodes) of `runs`: their long
    evaluations' (ONLY=long_eval: thousands of episodes of the final policy) where every one of
    them has one, episodes then the fewest any played; else their last evaluation during the run
    (SE None where unrecorded), episodes None."""
    long = [long_evaluation(run) for run in runs]
    if runs and None not in long:
        return [m for m, _, _ in long], [s / np.sqrt(n) for _, s, n in long], min(n for _, _, n in long)
    return (*last_evaluations(runs), None)


def last_evaluations(runs):
    """(returns at temperature 1, standard errors or None) of `runs`' last evaluations during the run."""
    return [evaluations(run)[-1][1] for run in runs], [evaluation_error(run) for run in runs]


def code_versions(runs):
    """What a cell says of the code that made `runs`: their commits in order of first use
    (`rlkit.provenance.describe`: a '+changes' suffix where the tree had uncommitted changes),
    'mixed: ' before them where the runs (or one resumed run) came from more than one, and
    'not recorded' for runs made before runs recorded it. Where the runs ran on more than one CPU
    (sessions land on different machines; `rlkit.provenance.machine`), how many ran on each
    follows in parentheses."""
    import collections

    from rlkit import provenance

    versions, unrecorded, cpus = [], 0, collections.Counter()
    for run in runs:
        records = provenance.read(run)
        unrecorded += not records
        versions += [v for v in dict.fromkeys(provenance.describe(r) for r in records) if v not in versions]
        cpus.update({provenance.machine(r) for r in records if r.get("cpu")})
    if not versions:
        return "not recorded"
    described = ", ".join(versions) + (f", {unrecorded} not recorded" if unrecorded else "")
    if len(cpus) > 1:
        described += " (" + ", ".join(f"{count} on {cpu}" for cpu, count in sorted(cpus.items())) + ")"
    return ("mixed: " if len(versions) + bool(unrecorded) > 1 else "") + described


def long_evaluation(run):
    """(mean return, its spread over episodes, episodes) of an archived run's long evaluation at
    temperature 1, or None where it has none."""
    path = os.path.join(run, LONG_EVALUATION)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        (cells,) = json.load(f)["results"].values()  # the policy's (or the random agent's) cells
    cell = cells["sampling_temp_1.0_max_noops_0"]
    return cell["mean_unclipped"], cell["std_unclipped"], cell["episodes"]


def epoch_summaries(run):
    """A loop run's per-epoch JSON (evaluation returns, world-model metrics, stage times), in epoch order."""
    paths = sorted(glob.glob(os.path.join(run, "eval_metrics", "epoch_*.json")),
                   key=lambda p: int(re.search(r"epoch_(\d+)", p).group(1)))
    return [json.load(open(path)) for path in paths]
