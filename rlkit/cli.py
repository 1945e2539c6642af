"""What every rlkit command shares: its common flags, one-line errors, and the saved run config.

Entry points define their flags in a `define_flags()` called under `if __name__ == "__main__"`
(so importing one defines no flags) and pass the values on as arguments; library code never
reads flags.
"""

import json
import os
import sys

import gin
from absl import app, flags, logging

from rlkit.errors import UserError
from rlkit.fileio import atomic_write_text
from rlkit.hparams import HParams, create_hparams

HPARAMS_FILE = "hparams.json"
GIN_FILE = "operative_config.gin"
COMMAND_FILE = "command.txt"


def define_hparams_flags(default_set, prefix=""):
    """--{prefix}hparams_set and --{prefix}hparams."""
    flags.DEFINE_string(f"{prefix}hparams_set", default_set,
                        "Registered hparams set; `python -m rlkit.hparams --list` shows them.")
    flags.DEFINE_string(f"{prefix}hparams", "",
                        "Overrides of the set, e.g. game=pong,eval_sampling_temps=[0.0,0.5]")


def define_gin_flags():
    """--gin_files and --gin_bindings: swap components (networks, env wrappers, optimizers)."""
    flags.DEFINE_multi_string("gin_files", [], "gin files that configure swappable components.")
    flags.DEFINE_multi_string("gin_bindings", [], "gin bindings, e.g. 'make_batch_env.gym_wrappers=[]'.")


def parse_gin(gin_files, gin_bindings):
    """Parses gin config; a missing file or a bad binding is a UserError."""
    for path in gin_files:
        if not os.path.isfile(path):
            raise UserError(f"gin file {path!r} does not exist")
    try:
        gin.parse_config_files_and_bindings(gin_files, gin_bindings)
    except (ValueError, SyntaxError, KeyError, ImportError) as e:
        message = " ".join(str(e).split())
        raise UserError(f"bad gin config: {message}") from None


def load_hparams(set_name, overrides, flag="hparams_set"):
    if not set_name:
        raise UserError(f"no hparams set given: pass --{flag} (python -m rlkit.hparams --list)")
    return create_hparams(set_name, overrides)


def prepare_output_dir(output_dir, hparams):
    """Creates `output_dir` and saves `hparams` there, or checks them against a run already there.

    Rerunning a command on its own output dir resumes it; a different configuration is refused
    so nothing already written is mixed up or overwritten.
    """
    if not output_dir:
        raise UserError("no output dir given: pass --output_dir=DIR")
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output dir {output_dir!r}: {e.strerror}") from None
    if not os.access(output_dir, os.W_OK):
        raise UserError(f"output dir {output_dir!r} is not writable; choose another --output_dir")
    path = os.path.join(output_dir, HPARAMS_FILE)
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        current = hparams.values()
        if saved != current:
            changed = sorted(k for k in set(saved) | set(current) if saved.get(k) != current.get(k))
            details = ", ".join(f"{k}: {saved.get(k)!r} there, {current.get(k)!r} now" for k in changed[:3])
            raise UserError(f"output dir {output_dir!r} holds a run with other hparams ({details}); "
                            "rerun with the same hparams to resume it, or choose a new --output_dir")
        logging.info("Resuming the run in %s", output_dir)
    else:
        atomic_write_text(path, hparams.to_json(indent=2) + "\n")
    atomic_write_text(os.path.join(output_dir, COMMAND_FILE), " ".join(sys.argv) + "\n")


def saved_hparams(output_dir):
    """The resolved hparams a run saved in its output dir."""
    path = os.path.join(output_dir, HPARAMS_FILE)
    try:
        with open(path) as f:
            return HParams.from_json(f.read())
    except FileNotFoundError:
        raise UserError(f"{path!r} does not exist: is {output_dir!r} an rlkit run directory?") from None


def write_operative_config(output_dir):
    """Saves the gin values the run actually used, once its components are built."""
    atomic_write_text(os.path.join(output_dir, GIN_FILE), gin.operative_config_str())


def run(main):
    """absl's app.run, with UserError printed as one line and exit status 2."""
    def main_with_user_errors(argv):
        try:
            return main(argv)
        except UserError as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)
    app.run(main_with_user_errors)
