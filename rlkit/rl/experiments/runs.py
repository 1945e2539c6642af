"""One run of a set, as every lab mode starts it: `--mode=train` and `--mode=dev` in this
process, a search trial or a benchmark run in a Ray worker (`train_in_dir`).

A set trains with the loop `rlkit.rl.loops.loop_for` names (Dreamer's, SimPLe's or the
model-free one); then its session graphs are drawn
(`rlkit.rl.experiments.session_graphs`). `rlkit.hparams.dev_version` shrinks a set for debugging, each family its own values.
"""

import json
import os
import shlex
import time

import gin
from absl import logging

from rlkit import cli, run_lock
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text

def check_set(hparams):
    """What the chosen trainer checks before writing anything."""
    from rlkit.rl.loops import loop_for
    loop = loop_for(hparams)
    if loop is None:
        raise UserError("the set is not a training set (it names no loop): use one such as rlmf_base, "
                        "rlmb_base_stochastic_discrete or dreamer_v2_minatar (python -m rlkit.hparams --list)")
    loop.check_names(hparams)


def real_step_budget(hparams):
    """The real env steps a run of `hparams` takes in all (a loop's first collection included)."""
    if hparams.loop == "simple":  # Dreamer's sets count theirs in num_env_steps
        from rlkit.rl.loops.simple import steps_per_collection
        return steps_per_collection(hparams) * (hparams.epochs + 1)
    return hparams.num_env_steps


def train(hparams, output_dir, seed, on_evaluation=None):
    """Trains (or resumes) as the set says, then draws the session graphs; returns the summary.
    on_evaluation(real env steps, main return) hears of each evaluation (a search's reports)."""
    from rlkit.rl.experiments import session_graphs
    from rlkit.rl.loops import loop_for

    start = time.monotonic()
    loop_for(hparams).train(hparams, output_dir, seed, on_evaluation)
    summary = session_graphs.write_session_graphs(output_dir, hparams)
    if summary is None:
        logging.warning("No evaluation in %s yet: no session graphs", output_dir)
        return None
    logging.info("Session graphs in %s: final return %.4g, best %.4g at %s real env steps, %s (this process: %.0f s)",
                 os.path.join(output_dir, "graphs"), summary["final_return"], summary["best_return"],
                 f"{summary['best_step']:,}", "solved at " + f"{summary['steps_to_solved']:,} steps"
                 if summary["steps_to_solved"] is not None else "not solved" if summary["solved_return"] is not None
                 else "no solved_return in the set", time.monotonic() - start)
    return summary


def check_spec(output_dir, spec_file, spec, kind):
    """Writes the spec of a search or benchmark (`kind`) in `output_dir` on its first start; a
    rerun must ask for the same one, which it then resumes."""
    path = os.path.join(output_dir, spec_file)
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        changed = [f"{k}: {saved.get(k)!r} there, {spec[k]!r} now" for k in sorted(spec) if saved.get(k) != spec[k]]
        if changed:
            raise UserError(f"{output_dir!r} holds another {kind} ({', '.join(changed[:3])}): rerun it with its own "
                            "flags to resume it, or choose a new --output_dir")
        return
    os.makedirs(output_dir, exist_ok=True)
    atomic_write_text(path, json.dumps(spec, indent=2) + "\n")


def gin_spec(gin_files, gin_bindings):
    """The gin config a search or benchmark hands its runs: its files (absolute paths, read by
    the Ray workers: local, or on a disk the cluster shares) and bindings; {} without any."""
    return {name: list(values) for name, values in (("gin_files", [os.path.abspath(p) for p in gin_files]),
                                                    ("gin_bindings", gin_bindings)) if values}


def rerun_command(set_name, overrides, seed, run_dir, gin_files=(), gin_bindings=()):
    """The command that trains (or resumes) the run in `run_dir` by itself."""
    gin_flags = "".join(f" --gin_files={shlex.quote(path)}" for path in gin_files) + "".join(
        f" --gin_bindings={shlex.quote(binding)}" for binding in gin_bindings)
    return (f"python -m rlkit.rl.lab --mode=train --hparams_set={set_name} --hparams={overrides} --seed={seed} "
            f"--output_dir={run_dir}{gin_flags}")


def train_in_dir(run_dir, set_name, overrides, seed, on_evaluation=None, cpus=1, gin_files=(), gin_bindings=()):
    """The set with `overrides` and the gin config trained (or resumed) in `run_dir` as
    `--mode=train` would, by a search trial or a benchmark run in a Ray worker: saved as any run
    (its command.txt says how to rerun it alone), its log in RUN/log.txt, TensorFlow on the
    `cpus` Ray reserved for it. Returns the session summary (None without an evaluation)."""
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(cpus))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    gin.clear_config()  # a Ray worker may have run another trial before this one
    cli.parse_gin(gin_files, gin_bindings)
    hparams = cli.run_hparams(run_dir, set_name, True, overrides)
    check_set(hparams)
    with run_lock.hold(run_dir):
        cli.save_run(run_dir, hparams, set_name, overrides,
                     command=rerun_command(set_name, overrides, seed, run_dir, gin_files, gin_bindings))
        with cli.log_to_file(os.path.join(run_dir, "log.txt")):
            return train(hparams, run_dir, seed, on_evaluation)
