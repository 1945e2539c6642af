"""The command scaffold every rlkit command uses: flags, gin, hparams, the run directory, and
one-line errors.

A command defines its flags in a `define_flags()` called under `if __name__ == "__main__"` (so
importing it defines none), then, in `main`:

    with cli.start_run(FLAGS, check=check_names) as (hparams, output_dir):   # trainers
        train(hparams, output_dir, FLAGS.seed)

    hparams = cli.load_hparams(FLAGS, run_dirs=[FLAGS.policy_dir])            # evaluator, player

Library code never reads flags: commands pass the values on as arguments.
"""

import contextlib
import json
import logging as std_logging
import os
import sys

import gin
from absl import flags, logging

from rlkit import gcs, provenance, run_lock
from rlkit.data_generators.make_env import check_game
from rlkit.errors import UserError, WithoutTensorFlowInfo, set_run_in_progress
from rlkit.fileio import atomic_write_text
from rlkit.hparams import HParams, apply_overrides, get_hparams, with_keys_added_later

HPARAMS_FILE = "hparams.json"        # the run's hparams, nested and complete
RUN_FILE = "run.json"                # the set name and overrides it was built from
GIN_FILE = "operative_config.gin"
COMMAND_FILE = "command.txt"
# What a trained policy or world model is tied to: these may not change when a run is read again.
# Where a run's work happens, not what it computes: a rerun may change these.
RESOURCE_KEYS = ("real_num_workers",)
ENV_SHAPE_KEYS = ("game", "frame_height", "frame_width", "grayscale", "frame_stack_size")

# The flags defined here belong to the command that asks for them: its --help lists them with its
# own (absl's --help shows the main module's key flags only).
flags.disclaim_key_flags()


def define_flags(default_set, output_dir_help=None):
    """--hparams_set/--hparams (aliases --loop_hparams_set/--loop_hparams, SimPLe's names),
    --gin_files/--gin_bindings, --seed, and --output_dir when the command writes a run."""
    flags.DEFINE_string("hparams_set", default_set,
                        "Registered hparams set; `python -m rlkit.hparams --list` shows them.")
    flags.DEFINE_string("hparams", "", "Overrides of the set, e.g. game=pong,ppo.learning_rate=3e-4")
    flags.DEFINE_alias("loop_hparams_set", "hparams_set")
    flags.DEFINE_alias("loop_hparams", "hparams")
    flags.DEFINE_multi_string("gin_files", [], "gin files that configure swappable components.")
    flags.DEFINE_multi_string("gin_bindings", [], "gin bindings, e.g. 'make_batch_env.gym_wrappers=[]'.")
    flags.DEFINE_integer("seed", 0, "Seed of the envs, the networks and the sampling.")
    if output_dir_help:
        flags.DEFINE_string("output_dir", None, output_dir_help)


def parse_gin(gin_files, gin_bindings):
    """Parses gin config; a missing file or a bad binding is a UserError."""
    for path in gin_files:
        if not os.path.isfile(path):
            raise UserError(f"gin file {path!r} does not exist")
    if not (gin_files or gin_bindings):
        return  # nothing to parse; parsing would also lock gin before rlkit's configurables exist
    # The modules that declare rlkit's configurables (Keras's optimizers, gymnasium's wrappers),
    # imported before parsing locks gin's registry.
    import rlkit.data_generators.make_env  # noqa: F401
    import rlkit.models.optimizers  # noqa: F401
    try:
        gin.parse_config_files_and_bindings(gin_files, gin_bindings)
    except (ValueError, SyntaxError, KeyError, ImportError) as e:
        message = " ".join(str(e).split())
        raise UserError(f"bad gin config: {message}") from None


def _read_json(path):
    with open(path) as f:
        return json.load(f)


def saved_hparams(run_dir):
    """The hparams a run saved in `run_dir` (local), or None if it saved none."""
    path = os.path.join(run_dir, HPARAMS_FILE)
    return with_keys_added_later(HParams.from_dict(_read_json(path))) if os.path.exists(path) else None


def _differences(saved, requested):
    saved, requested = saved.flat_values(), requested.flat_values()
    changed = sorted(k for k in set(saved) | set(requested) if saved.get(k) != requested.get(k))
    return ", ".join(f"{k}: {saved.get(k)!r} there, {requested.get(k)!r} now" for k in changed[:3])


def run_hparams(output_dir, set_name, set_chosen, overrides, variant=None):
    """The hparams of the run in `output_dir`: its saved hparams.json when it has one (a rerun
    resumes with exactly what the run started with, whatever the registered set says today),
    else the set `set_name`, changed by `variant` (a (name, function) pair such as the lab's
    ("dev", shrink)), with `overrides`. Asking a saved run for other values is refused."""
    saved = saved_hparams(output_dir)
    if saved is None:
        if not set_name:
            raise UserError("no hparams set given: pass --hparams_set (python -m rlkit.hparams --list)")
        hparams = get_hparams(set_name)
        return apply_overrides(variant[1](hparams) if variant else hparams, overrides)
    origin_path = os.path.join(output_dir, RUN_FILE)
    origin_record = _read_json(origin_path) if os.path.exists(origin_path) else {}
    origin = origin_record.get("hparams_set")
    saved_variant, wanted_variant = origin_record.get("variant"), variant[0] if variant else None
    if saved_variant != wanted_variant:
        described = f"a {saved_variant} run" if saved_variant else "a full run"
        how = f"python -m rlkit.rl.lab --mode={saved_variant}" if saved_variant else "--mode=train (or a trainer)"
        raise UserError(f"output dir {output_dir!r} holds {described} of set {origin!r}: resume it with {how}, "
                        "or choose a new --output_dir")
    if set_chosen and origin and origin != set_name:
        raise UserError(f"output dir {output_dir!r} holds a run of set {origin!r}, not {set_name!r}; rerun with "
                        f"--hparams_set={origin} to resume it, or choose a new --output_dir")
    requested = apply_overrides(saved.copy(), overrides)
    for name in RESOURCE_KEYS:  # how the run is spread over machines may change between reruns
        if name in saved and requested.get(name) != saved.get(name):
            logging.info("Resuming with %s=%r (was %r)", name, requested.get(name), saved.get(name))
            setattr(saved, name, requested.get(name))
    if requested != saved:
        raise UserError(f"output dir {output_dir!r} holds a run with other hparams ({_differences(saved, requested)}); "
                        "rerun with the same hparams to resume it, or choose a new --output_dir")
    logging.info("Resuming the run in %s with its saved %s", output_dir, HPARAMS_FILE)
    return saved


def save_run(output_dir, hparams, set_name, overrides, variant_name=None, command=None):
    """Creates `output_dir` and writes hparams.json and run.json (once), command.txt (this
    process's command line, or `command`: how to rerun a run started by a search) and the code's
    record (rlkit.provenance: the commit, the library versions, the CPU)."""
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output dir {output_dir!r}: {e.strerror}") from None
    if not os.access(output_dir, os.W_OK):
        raise UserError(f"output dir {output_dir!r} is not writable; choose another --output_dir")
    hparams_path, resolved = os.path.join(output_dir, HPARAMS_FILE), hparams.to_json(indent=2) + "\n"
    if not os.path.exists(hparams_path):
        atomic_write_text(hparams_path, resolved)
        atomic_write_text(os.path.join(output_dir, RUN_FILE),
                          json.dumps({"hparams_set": set_name, "hparams": overrides,
                                      **({"variant": variant_name} if variant_name else {})}, indent=2) + "\n")
    else:
        with open(hparams_path) as f:
            if f.read() != resolved:  # a rerun that changed a RESOURCE_KEYS value: record what runs now
                atomic_write_text(hparams_path, resolved)
    atomic_write_text(os.path.join(output_dir, COMMAND_FILE), (command or " ".join(sys.argv)) + "\n")
    provenance.record_run(output_dir)


@contextlib.contextmanager
def start_run(FLAGS, check=None, variant=None, finished=None):  # noqa: N803  (absl's FLAGS, passed in explicitly)
    """Gin, the run's hparams (new, or saved by the run being resumed), the game and
    `check(hparams)` checked before anything is written, then the saved run config. Yields
    (hparams, local output dir); a gs:// output dir is synced with its bucket meanwhile. The run's
    lock (rlkit.run_lock) is held throughout: a second process on the same dir is refused.
    variant: (name, function of hparams) that changes a new run's set before the overrides
    (the lab's dev mode); run.json records its name, and only the same variant resumes the run.
    finished(hparams, output_dir): whether a saved run is done; a rerun of a done run skips the
    check (which may load TensorFlow) and writes nothing, so its provenance names only the code
    that ran it."""
    if not FLAGS.output_dir:
        raise UserError("no output dir given: pass --output_dir=DIR")
    run_lock.probe(FLAGS.output_dir)  # a second writer is refused first, before anything slow
    parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    with contextlib.ExitStack() as stack:
        if gcs.is_remote(FLAGS.output_dir):  # the bucket's lock, before its files are fetched to resume
            stack.enter_context(run_lock.hold(FLAGS.output_dir))
        output_dir = stack.enter_context(gcs.local_output(FLAGS.output_dir))
        hparams = run_hparams(output_dir, FLAGS.hparams_set, FLAGS["hparams_set"].present, FLAGS.hparams, variant)
        done = (finished is not None and os.path.exists(os.path.join(output_dir, HPARAMS_FILE))
                and finished(hparams, output_dir))  # a saved run passed its checks when it started
        if not hparams.get("family"):  # a run's set (a component's, such as a world model's, has no game)
            check_game(hparams.game)
        if check is not None and not done:
            check(hparams)
        if not gcs.is_remote(FLAGS.output_dir):  # taken once the checks passed: a mistake writes nothing
            stack.enter_context(run_lock.hold(output_dir))
        if not done:
            save_run(output_dir, hparams, FLAGS.hparams_set, FLAGS.hparams, variant[0] if variant else None)
        set_run_in_progress(FLAGS.output_dir)
        yield hparams, output_dir


@contextlib.contextmanager
def locked_output(path):
    """A local directory for output `path` (for gs://, synced with its bucket), its lock
    (rlkit.run_lock) held meanwhile: what a command that writes outside a run dir, such as the
    evaluator's metrics, writes into; its code's record (rlkit.provenance) is added once the
    command's block is done."""
    run_lock.probe(path)
    with contextlib.ExitStack() as stack:
        if gcs.is_remote(path):
            stack.enter_context(run_lock.hold(path))
        local_dir = stack.enter_context(gcs.local_output(path))
        if not gcs.is_remote(path):
            stack.enter_context(run_lock.hold(local_dir))
        yield local_dir
        provenance.record_run(local_dir)  # once the command's output is there: a mistake leaves nothing


@contextlib.contextmanager
def log_to_file(path):
    """absl's INFO lines (and above) also go to `path` meanwhile: the log of a run that a Ray
    worker trains, whose terminal nobody sees."""
    handler = std_logging.FileHandler(path)
    handler.setFormatter(std_logging.Formatter("%(asctime)s %(levelname)s %(filename)s:%(lineno)d] %(message)s"))
    handler.addFilter(WithoutTensorFlowInfo())
    logging.set_verbosity(logging.INFO)
    logging.get_absl_logger().addHandler(handler)
    try:
        yield
    finally:
        logging.get_absl_logger().removeHandler(handler)
        handler.close()


def find_saved_hparams(path):
    """The hparams saved by the run that `path` (a run dir, or a dir one or two levels inside
    one, such as RUN/policy/epoch_3; local or gs://) belongs to, or None."""
    for _ in range(3):
        if gcs.is_remote(path):
            text = gcs.read_text(path.rstrip("/") + "/" + HPARAMS_FILE)
            if text is not None:
                return with_keys_added_later(HParams.from_json(text))
        elif os.path.exists(os.path.join(path, HPARAMS_FILE)):
            return saved_hparams(path)
        parent = os.path.dirname(path.rstrip("/"))
        if parent in ("", path.rstrip("/"), "gs:", "gs:/"):
            break
        path = parent
    return None


def data_epochs(value):
    """The data epochs a --data_epochs list flag gives ("2,3"), or None where it is not given."""
    if not value:
        return None
    try:
        return [int(epoch) for epoch in value]
    except ValueError:
        raise UserError(f"--data_epochs={','.join(value)}: give data epoch numbers, e.g. 3 or 2,3") from None


def world_model_hparams(wm_dir):
    """The hparams saved by the world model in `wm_dir` (--wm_dir), or by the loop run it is part of."""
    hparams = find_saved_hparams(wm_dir)
    if hparams is None:
        raise UserError(f"no world model in --wm_dir={wm_dir!r} (no {HPARAMS_FILE} there or above it): point it "
                        "at a trainer_world_model output dir or a trainer_model_based run's world_model/")
    return hparams


def load_hparams(FLAGS, run_dirs=(), add_defaults=None):  # noqa: N803
    """Gin and the hparams of a command that reads runs (evaluator, player): the saved hparams
    of the run that `run_dirs` belong to when there is one, else --hparams_set; then
    `add_defaults(hparams)` (settings such a command needs that a set may lack), then
    --hparams. A trained run's game and frame shape cannot be overridden."""
    parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    saved = next((h for h in (find_saved_hparams(d) for d in run_dirs if d) if h is not None), None)
    if saved is not None:
        if FLAGS["hparams_set"].present:
            logging.info("Using the run's own %s rather than the set %r", HPARAMS_FILE, FLAGS.hparams_set)
        base = saved.copy()
    elif FLAGS.hparams_set:
        base = get_hparams(FLAGS.hparams_set)
    else:
        raise UserError("no hparams: pass --hparams_set, or point the command at a run dir that has "
                        f"{HPARAMS_FILE}")
    if add_defaults is not None:
        add_defaults(base)
    hparams = apply_overrides(base, FLAGS.hparams)
    if saved is not None:
        for name in ENV_SHAPE_KEYS:
            if name in saved and saved.get(name) != hparams.get(name):
                raise UserError(f"the run was trained with {name}={saved.get(name)!r}, not {hparams.get(name)!r}: "
                                f"its policy and world model only work on that, so drop {name} from --hparams")
    if not hparams.get("family"):
        check_game(hparams.game)
    return hparams


def write_operative_config(output_dir):
    """Saves the gin values the run actually used, once its components are built."""
    atomic_write_text(os.path.join(output_dir, GIN_FILE), gin.operative_config_str())
