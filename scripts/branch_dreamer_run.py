"""Branch a DreamerV2 run: copy its directory as it stands and go on from there with other
hparams, an experiment on a long run without training it again from the start.

    python scripts/branch_dreamer_run.py --branch_from=RUN --output_dir=COPY --seed=0 \
        --branch_hparams=actor_critic.entropy_coef=0.03,num_env_steps=307200 [--ratio_factor=4]

The first call copies RUN (pause or stop its writer first: `kill -STOP`, then `-CONT`) and
writes the changed values into the copy's hparams.json; a rerun resumes the copy, as any run
resumes. Two things a plain resume would not honour are set here: the optimizers' learning
rates (Keras restores them from the checkpoint) are set from the copy's hparams, and with
--ratio_factor the copy takes that many times the set's gradient steps per env step from the
step it branched at (the loop counts the updates owed from a run's start, so a changed
train_ratio would owe them all again). docs/dreamer.md, "What the checks say about the 1M runs",
has the branches of Breakout's 1M run.
"""

import json
import os
import shutil

from absl import flags

import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)
import rlkit.rl.loops.dreamer as loop
from rlkit import cli
from rlkit.data_generators import storage
from rlkit.errors import UserError, run_command
from rlkit.fileio import atomic_write_text
from rlkit.hparams import apply_overrides
from rlkit.rl import trainer_model_based

BRANCH_FILE = "branch.json"  # where the copy branched and at what ratio, for its reruns

FLAGS = flags.FLAGS


def branch(run, output_dir, overrides, ratio_factor):
    """Copies `run` into `output_dir` with `overrides` applied to its hparams.json and records
    where it branched in BRANCH_FILE."""
    hparams = cli.saved_hparams(run)
    if hparams is None or hparams.get("loop") != "dreamer":
        raise UserError(f"{run!r} is not a Dreamer run (no hparams.json with loop=dreamer): pass --run=DIR of one")
    changed = apply_overrides(hparams, overrides)  # a bad override refused before anything is copied
    shutil.copytree(run, output_dir, ignore=shutil.ignore_patterns(".rlkit.lock"))
    atomic_write_text(os.path.join(output_dir, cli.HPARAMS_FILE), changed.to_json(indent=2) + "\n")
    branched_at = storage.stored_steps(os.path.join(output_dir, "data"), 0)
    # Written last: a copy without it is no branch, and a rerun refuses it rather than resume it.
    atomic_write_text(os.path.join(output_dir, BRANCH_FILE), json.dumps(
        dict(run=run, hparams=overrides, ratio_factor=ratio_factor, env_steps=branched_at), indent=2) + "\n")


def follow_branch(record):
    """The loop's updates owed and optimizers' learning rates as the branch `record` asks."""
    updates_due, start = loop.updates_due, record["env_steps"]

    def branch_updates_due(hparams, env_steps):
        before = updates_due(hparams, start)
        return before + int(record["ratio_factor"] * (updates_due(hparams, env_steps) - before))

    dreamer_init = loop.Dreamer.__init__

    def init(self, *args, **kwargs):
        dreamer_init(self, *args, **kwargs)
        agent, hp = self.agent, self.hparams
        for optimizer, rate in ((agent.model_optimizer, hp.world_model.learning_rate),
                                (agent.actor_optimizer, hp.actor_critic.actor_learning_rate),
                                (agent.critic_optimizer, hp.actor_critic.critic_learning_rate)):
            optimizer.learning_rate.assign(rate)

    loop.updates_due, loop.Dreamer.__init__ = branch_updates_due, init


def main(argv):
    if not FLAGS.branch_from or not FLAGS.output_dir:
        raise UserError("--branch_from and --output_dir are required: the run to branch from and its copy")
    if not os.path.exists(os.path.join(FLAGS.output_dir, BRANCH_FILE)):
        if os.path.exists(FLAGS.output_dir):
            raise UserError(f"{FLAGS.output_dir!r} exists and is no branch: choose a new --output_dir")
        branch(FLAGS.branch_from, FLAGS.output_dir, FLAGS.branch_hparams, FLAGS.ratio_factor)
    with open(os.path.join(FLAGS.output_dir, BRANCH_FILE)) as f:
        follow_branch(json.load(f))
    trainer_model_based.main(argv)  # the copy's hparams.json says what runs: it resumes as it stands


if __name__ == "__main__":
    trainer_model_based.define_flags()  # --output_dir and --seed are the trainer's
    flags.DEFINE_string("branch_from", None, "the Dreamer run directory to branch from")
    flags.DEFINE_string("branch_hparams", "", "comma-separated overrides of the run's hparams, for the copy")
    flags.DEFINE_float("ratio_factor", 1.0, "times the set's gradient steps per env step, from the branch on")
    run_command(main)
