"""`lab --mode=search`: a hyperparameter search over a ranged set, on Ray Tune.

    python -m rlkit.rl.lab --mode=search --hparams_set=rlmf_minatar --ranges=ppo_learning \
        --num_trials=16 --max_concurrent=2 --output_dir=DIR [--ray_address=HEAD:6379]

Each trial is a normal rlkit run of the set with the trial's drawn values as overrides (and
the command's --gin_files and --gin_bindings), in DIR/trials/trial_K (resumable by itself with the command in its command.txt). Tune draws the
values (its random search, seeded by --seed) and stops the trials that fall behind with ASHA, on
the evaluation return each trial reports after every evaluation (x: real env steps; rungs at
--grace_fraction of the run's real steps and doublings of it). At the end:

    DIR/search.md, search.json   the trials: values, real steps reached, final and best return
    DIR/search.png               each trial's final return against each searched value
    DIR/best/                    the best trial's hparams.json and run.json: a run dir to train
                                 anew with `python -m rlkit.rl.lab --output_dir=DIR/best`

Rerunning the same command resumes the search (Tune's state in DIR/tune, the trials' runs from
their checkpoints); a finished search just rewrites the results.
"""

import json
import os
import shutil

from absl import logging

from rlkit import cli, run_lock
from rlkit.errors import UserError, set_run_in_progress
from rlkit.fileio import atomic_write_text
from rlkit.hparams import check_ranges, create_hparams, get_ranges
from rlkit.hparams.ranges import LOG_SCALE, trial_overrides
from rlkit.rl.experiments import runs
from rlkit.rl.loops.workers import import_ray, init_ray

METRIC, TIME_ATTR = "return", "real_env_steps"


def search_space(tune, ranges):
    """Tune's sampling of each range."""
    space = {}
    for hparam_range in ranges:
        log = hparam_range.scale == LOG_SCALE
        if hparam_range.kind == "float":
            space[hparam_range.name] = (tune.loguniform if log else tune.uniform)(hparam_range.low, hparam_range.high)
        elif hparam_range.kind == "int":  # Tune's upper bound is exclusive
            space[hparam_range.name] = (tune.lograndint if log else tune.randint)(hparam_range.low,
                                                                                  hparam_range.high + 1)
        else:
            space[hparam_range.name] = tune.choice(hparam_range.values)
    return space


def trial_dir_name(trial_id):
    """trial_K from Tune's '<experiment>_K': the same K for the same draw when a search whose
    Tune state was lost starts again, so its trials' runs still resume."""
    return f"trial_{trial_id.rsplit('_', 1)[-1]}"


def run_trial(config, spec):
    """A Tune trial (in a Ray worker): the set with the drawn values, trained in its own run dir;
    each evaluation reported to Tune, which may stop the trial there."""
    from ray import tune

    run_dir = os.path.join(spec["output_dir"], "trials", trial_dir_name(tune.get_context().get_trial_id()))
    overrides = ",".join(part for part in (spec["hparams"], trial_overrides(config["values"])) if part)
    reported = []

    def report(real_env_steps, main_return):
        reported.append(real_env_steps)
        tune.report({TIME_ATTR: int(real_env_steps), METRIC: float(main_return)})

    summary = runs.train_in_dir(run_dir, spec["hparams_set"], overrides, spec["seed"], on_evaluation=report,
                               cpus=spec["cpus_per_trial"], gin_files=spec.get("gin_files", ()),
                               gin_bindings=spec.get("gin_bindings", ()))
    if not reported and summary is not None:  # a finished run resumed: its last evaluation again
        report(summary["final_step"], summary["final_return"])


def describe_values(values):
    return ", ".join(f"{name}={value:.3g}" if isinstance(value, float) else f"{name}={value}"
                     for name, value in values.items())


def progress_lines(tune, num_trials, output_dir):
    """A Tune callback logging one line per trial result, start and end, instead of Tune's tables."""
    class ProgressLines(tune.Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            logging.info("%s (%s) at %s real env steps: return %.4g | %d/%d trials started",
                         trial_dir_name(trial.trial_id), describe_values(trial.config["values"]),
                         f"{result[TIME_ATTR]:,}", result[METRIC], len(trials), num_trials)

        def on_trial_complete(self, iteration, trials, trial, **info):
            logging.info("%s ended", trial_dir_name(trial.trial_id))

        def on_trial_error(self, iteration, trials, trial, **info):
            logging.warning("%s failed: its log is %s", trial_dir_name(trial.trial_id),
                            os.path.join(output_dir, "trials", trial_dir_name(trial.trial_id), "log.txt"))
    return ProgressLines()


def trial_rows(result_grid, budget, output_dir):
    """A row per trial: its values, status, real steps reached, final and best return."""
    rows = []
    for result in result_grid:
        if result.config is None:  # never started
            continue
        history = result.metrics_dataframe
        name = trial_dir_name(os.path.basename(result.path))  # Tune's trial dir is named by the trial id
        row = dict(trial=name, values=dict(result.config["values"]),
                   run_dir=os.path.join(output_dir, "trials", name))
        if history is None or METRIC not in history or history[METRIC].isna().all():
            row.update(status=f"error: {str(result.error).splitlines()[0][:200]}" if result.error else "no evaluation",
                       real_env_steps=0, final_return=None, best_return=None)
        else:
            steps = int(history[TIME_ATTR].max())
            row.update(status="error" if result.error else "finished" if steps >= budget * 0.99 else "stopped early",
                       real_env_steps=steps, final_return=float(history[METRIC].iloc[-1]),
                       best_return=float(history[METRIC].max()))
        rows.append(row)
    return sorted(rows, key=lambda row: row["trial"])


def best_row(rows):
    """The best trial: the highest final return among those that ran to the end (else among all)."""
    scored = [row for row in rows if row["final_return"] is not None]
    finished = [row for row in scored if row["status"] == "finished"] or scored
    return max(finished, key=lambda row: row["final_return"]) if finished else None


def draw_search(rows, ranges, path, title):
    """search.png: for each searched hparam, each trial's final return against its value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scored = [row for row in rows if row["final_return"] is not None]
    ranges = list(ranges)
    figure, axes = plt.subplots(1, len(ranges), figsize=(4.5 * len(ranges), 3.8), squeeze=False)
    for axis, hparam_range in zip(axes[0], ranges):
        values = [row["values"][hparam_range.name] for row in scored]
        if hparam_range.kind == "categorical":
            labels = [str(v) for v in hparam_range.values]
            values = [labels.index(str(v)) for v in values]
            axis.set_xticks(range(len(labels)), labels)
        for row, value in zip(scored, values):
            finished = row["status"] == "finished"
            axis.scatter(value, row["final_return"], s=40, color="C0" if finished else "C1",
                         label="ran to the end" if finished else "stopped early (ASHA)")
        if hparam_range.scale == LOG_SCALE:
            axis.set_xscale("log")
        axis.set_xlabel(hparam_range.name)
        axis.set_ylabel("final evaluation return")
        axis.grid(alpha=0.3)
        handles, labels = axis.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        axis.legend(unique.values(), unique.keys(), fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    figure.savefig(path + ".tmp.png", dpi=100)
    plt.close(figure)
    os.replace(path + ".tmp.png", path)


def write_results(output_dir, spec, rows, ranges):
    """search.md, search.json, search.png and best/ (see the module's doc)."""
    best = best_row(rows)
    if best is not None:
        best_dir = os.path.join(output_dir, "best")
        os.makedirs(best_dir, exist_ok=True)
        for name in (cli.HPARAMS_FILE, cli.RUN_FILE):
            shutil.copyfile(os.path.join(best["run_dir"], name), os.path.join(best_dir, name))
    atomic_write_text(os.path.join(output_dir, "search.json"),
                      json.dumps(dict(spec=spec, trials=rows, best=best), indent=2) + "\n")
    names = [hparam_range.name for hparam_range in ranges]

    def number(value):
        return "" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)

    lines = [f"# Search: `{spec['hparams_set']}` over `{spec['ranges']}`", "",
             f"{len(rows)} trials of {spec['num_trials']}, at most {spec['max_concurrent']} at once; ASHA on the "
             f"evaluation return (grace {spec['grace_fraction']:g} of {spec['real_step_budget']:,} real env steps, "
             "halving); seed " + str(spec["seed"]) + ".", "",
             "| trial | " + " | ".join(f"`{name}`" for name in names) + " | status | real env steps | final return "
             "| best return |", "|" + " --- |" * (len(names) + 5)]
    for row in rows:
        lines.append(f"| {row['trial']} | " + " | ".join(number(row["values"].get(name)) for name in names) +
                     f" | {row['status']} | {row['real_env_steps']:,} | {number(row['final_return'])} | "
                     f"{number(row['best_return'])} |")
    if best is not None:
        lines += ["", f"Best: {best['trial']} (final return {best['final_return']:.4g}), "
                  f"`{trial_overrides(best['values'])}`. Its resolved hparams are in `best/hparams.json`; train "
                  "them anew with", "", f"    python -m rlkit.rl.lab --mode=train --output_dir={output_dir}/best"]
    lines += ["", "![each trial's final return against each searched value](search.png)"]
    atomic_write_text(os.path.join(output_dir, "search.md"), "\n".join(lines) + "\n")
    if any(row["final_return"] is not None for row in rows):
        draw_search(rows, ranges, os.path.join(output_dir, "search.png"),
                    f"{spec['hparams_set']}: {spec['ranges']}, {len(rows)} trials")
    return best


def search(set_name, overrides, ranges_name, num_trials, max_concurrent, output_dir, seed, ray_address=None,
           cpus_per_trial=1, grace_fraction=0.25, gin_config=None):
    """Runs (or resumes) the search; returns the best trial's row. gin_config: runs.gin_spec's
    files and bindings, parsed by every trial."""
    if not set_name:
        raise UserError("--mode=search needs --hparams_set (the set whose values the trials change)")
    if not ranges_name:
        raise UserError("--mode=search needs --ranges (a ranged set; python -m rlkit.hparams --list_ranges)")
    if num_trials < 1 or max_concurrent < 1:
        raise UserError("--num_trials and --max_concurrent must be at least 1")
    if not 0 < grace_fraction <= 1:
        raise UserError("--grace_fraction must be in (0, 1]")
    import_ray("--mode=search")
    hparams = create_hparams(set_name, overrides)
    ranges = get_ranges(ranges_name)
    check_ranges(ranges, hparams, f"ranges {ranges_name!r}")
    runs.check_set(hparams)
    output_dir = os.path.abspath(output_dir)
    budget = runs.real_step_budget(hparams)
    spec = dict(hparams_set=set_name, hparams=overrides, ranges=ranges_name, num_trials=num_trials, seed=seed,
                max_concurrent=max_concurrent, grace_fraction=grace_fraction, real_step_budget=budget,
                **(gin_config or {}))
    with run_lock.hold(output_dir):  # one search or benchmark per dir
        runs.check_spec(output_dir, "search_spec.json", spec, "search")
        set_run_in_progress(output_dir)

        # Tune saves its state this often (seconds), so a killed search loses little; its own
        # console output (tables, banners) gives way to one line per result (_ProgressLines).
        os.environ.setdefault("TUNE_GLOBAL_CHECKPOINT_S", "5")
        os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
        # Ctrl-C stops the search as it stops any rlkit command (one line saying how to resume), not
        # with Tune's own handler, whose ending looks like a finished search.
        os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"
        init_ray("--mode=search", ray_address)
        from ray import tune
        from ray.tune.schedulers import ASHAScheduler
        from ray.tune.search import BasicVariantGenerator

        resources = tune.PlacementGroupFactory([{"CPU": cpus_per_trial}] + [{"CPU": 1}] * hparams.real_num_workers)
        trainable = tune.with_resources(tune.with_parameters(run_trial, spec=dict(
            spec, output_dir=output_dir, cpus_per_trial=cpus_per_trial)), resources)
        experiment = os.path.join(output_dir, "tune")
        run_config = tune.RunConfig(name="tune", storage_path=output_dir, verbose=0,
                                    callbacks=[progress_lines(tune, num_trials, output_dir)])
        name_by_id = dict(trial_dirname_creator=lambda trial: trial.trial_id)
        if tune.Tuner.can_restore(experiment):
            logging.info("Resuming the search in %s", output_dir)
            tuner = tune.Tuner.restore(experiment, trainable, resume_unfinished=True, resume_errored=True)
        else:
            grace = max(1, int(budget * grace_fraction))
            scheduler = ASHAScheduler(time_attr=TIME_ATTR, max_t=budget, grace_period=grace, reduction_factor=2)
            tuner = tune.Tuner(trainable, param_space={"values": search_space(tune, ranges)}, run_config=run_config,
                               tune_config=tune.TuneConfig(
                                   metric=METRIC, mode="max", scheduler=scheduler, num_samples=num_trials,
                                   max_concurrent_trials=max_concurrent,
                                   search_alg=BasicVariantGenerator(random_state=seed), reuse_actors=True, **name_by_id))
            logging.info("Searching %s over %s: %d trials, %d at once, on %s", set_name, ranges_name, num_trials,
                         max_concurrent, f"Ray at {ray_address}" if ray_address else "this machine's Ray")
        result_grid = tuner.fit()
        rows = trial_rows(result_grid, budget, output_dir)
        best = write_results(output_dir, spec, rows, ranges)
        unfinished = num_trials - sum(1 for row in rows if row["status"] in ("finished", "stopped early"))
        logging.info("Search results in %s: %d trials%s; best %s", os.path.join(output_dir, "search.md"), len(rows),
                     f" ({unfinished} did not end well: see search.md)" if unfinished else "",
                     f"{best['trial']} with final return {best['final_return']:.4g}" if best else "none yet")
        return best
