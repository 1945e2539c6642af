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
import signal
import sys

import gin
from absl import app, flags, logging

from rlkit import gcs
from rlkit.data_generators.make_env import check_game
from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.hparams import HParams, apply_overrides, get_hparams, with_keys_added_later

HPARAMS_FILE = "hparams.json"        # the run's hparams, nested and complete
RUN_FILE = "run.json"                # the set name and overrides it was built from
GIN_FILE = "operative_config.gin"
COMMAND_FILE = "command.txt"
_run_in_progress = None  # the output dir of the run this command started, for the Ctrl-C line
# What a trained policy or world model is tied to: these may not change when a run is read again.
# Where a run's work happens, not what it computes: a rerun may change these.
RESOURCE_KEYS = ("real_num_workers",)
ENV_SHAPE_KEYS = ("game", "frame_height", "frame_width", "grayscale", "frame_stack_size")


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
    """Creates `output_dir` and writes hparams.json and run.json (once) and command.txt (this
    process's command line, or `command`: how to rerun a run started by a search)."""
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


@contextlib.contextmanager
def start_run(FLAGS, check=None, variant=None):  # noqa: N803  (absl's FLAGS object, passed in explicitly)
    """Gin, the run's hparams (new, or saved by the run being resumed), the game and
    `check(hparams)` checked before anything is written, then the saved run config. Yields
    (hparams, local output dir); a gs:// output dir is synced with its bucket meanwhile.
    variant: (name, function of hparams) that changes a new run's set before the overrides
    (the lab's dev mode); run.json records its name, and only the same variant resumes the run."""
    parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    if not FLAGS.output_dir:
        raise UserError("no output dir given: pass --output_dir=DIR")
    with gcs.local_output(FLAGS.output_dir) as output_dir:
        hparams = run_hparams(output_dir, FLAGS.hparams_set, FLAGS["hparams_set"].present, FLAGS.hparams, variant)
        if "game" in hparams:
            check_game(hparams.game)
        if check is not None:
            check(hparams)
        save_run(output_dir, hparams, FLAGS.hparams_set, FLAGS.hparams, variant[0] if variant else None)
        set_run_in_progress(FLAGS.output_dir)
        yield hparams, output_dir


def set_run_in_progress(output_dir):
    """The dir a Ctrl-C's line tells the user to resume (what a command that writes runs without
    start_run, such as a search, is working in)."""
    global _run_in_progress
    _run_in_progress = output_dir


@contextlib.contextmanager
def log_to_file(path):
    """absl's INFO lines (and above) also go to `path` meanwhile: the log of a run that a Ray
    worker trains, whose terminal nobody sees."""
    handler = std_logging.FileHandler(path)
    handler.setFormatter(std_logging.Formatter("%(asctime)s %(levelname)s %(filename)s:%(lineno)d] %(message)s"))
    handler.addFilter(_WithoutTensorFlowInfo())
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
    if "game" in hparams:
        check_game(hparams.game)
    return hparams


def write_operative_config(output_dir):
    """Saves the gin values the run actually used, once its components are built."""
    atomic_write_text(os.path.join(output_dir, GIN_FILE), gin.operative_config_str())


class _WithoutTensorFlowInfo(std_logging.Filter):
    """Drops TensorFlow's and TensorBoard's own info lines (checkpoint sharding, SavedModel
    assets, event-file reading), which would bury the progress lines; their warnings and errors
    still show."""

    def filter(self, record):
        return record.levelno >= std_logging.WARNING or not any(
            f"{os.sep}{package}{os.sep}" in record.pathname for package in ("tensorflow", "tensorboard"))


class Stopped(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is, so both unwind the same way."""


def _raise_stopped(signum, frame):
    raise Stopped()


def _quiet_shutdown():
    """After the one line that says why a command stopped, TensorFlow's warnings about objects
    torn down half-built (a checkpoint that did not fit, say) would only bury it."""
    std_logging.getLogger("tensorflow").setLevel(std_logging.ERROR)


def run(main):
    """absl's app.run, with UserError printed as one line and exit status 2, and Ctrl-C or
    SIGTERM as one line saying how to resume and exit status 130 or 143.

    Both stop the command where it is: pending `finally` blocks run (a gs:// output dir gets
    its last upload) and files are only ever replaced whole (`fileio.atomic_write_*`), so what
    a run wrote stays readable and a rerun of the same command resumes it."""
    def main_with_user_errors(argv):
        std_logging.getLogger("tensorflow").setLevel(std_logging.WARNING)
        logging.get_absl_handler().addFilter(_WithoutTensorFlowInfo())
        signal.signal(signal.SIGTERM, _raise_stopped)
        try:
            return main(argv)
        except UserError as e:
            _quiet_shutdown()
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt as e:
            _quiet_shutdown()
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the message short
            name, status = ("SIGTERM", 143) if isinstance(e, Stopped) else ("Ctrl-C", 130)
            hint = (f"rerun the same command to resume the run in {_run_in_progress}" if _run_in_progress
                    else "nothing was left half-written")
            print(f"stopped by {name}: {hint}", file=sys.stderr)
            sys.exit(status)
    app.run(main_with_user_errors)
