"""Saving a run's checkpoint whole, and restoring the newest whole one with one clear error
when none fits.

A kill during a save on a filesystem without atomic rename can leave the newest checkpoint's
files truncated while the checkpoint state already names it; such a checkpoint is passed over
for the one before it, with a warning line, so that the run resumes a little further back.
"""

import tensorflow as tf
from absl import logging

from rlkit.errors import UserError, signals_held


def save(manager, number):
    """`manager.save(checkpoint_number=number)`, with Ctrl-C and SIGTERM held until it is written."""
    with signals_held():
        return manager.save(checkpoint_number=number)


def _is_damaged(error):
    """Whether `error` is what reading a truncated or half-written checkpoint raises (a short
    index: a bare OpError, "not an sstable"; a short data file: IndexError, "Read less bytes
    than requested"; a missing file), as against a checkpoint of other shapes."""
    return (isinstance(error, (IndexError, tf.errors.DataLossError, tf.errors.OutOfRangeError,
                               tf.errors.NotFoundError)) or type(error) is tf.errors.OpError)


def _restore(checkpoint, path, added_later):
    stored = {name.split("/")[0] for name, _ in tf.train.list_variables(path)}
    missing = [name for name in added_later if name not in stored]
    if missing:  # restore through a view without them
        checkpoint = tf.train.Checkpoint(**{name: value for name, value in vars(checkpoint).items()
                                            if not name.startswith("_") and name not in missing})
    # Every object given must match; a checkpoint may hold more (Dreamer's agent, read for its world model).
    checkpoint.restore(path).assert_existing_objects_matched().expect_partial()


def restore_latest(checkpoint, manager, what, added_later=()):
    """Restores `manager`'s newest whole checkpoint into `checkpoint`; returns its path, or None
    if there is none yet.

    `what` names the model for the error message when the checkpoint holds other shapes.
    added_later: names of `checkpoint`'s counters that a later rlkit added. A checkpoint written
    before them restores without them (they keep their initial values), so that runs started by
    an older rlkit resume; every other object must match.
    """
    candidates = list(reversed(manager.checkpoints))  # newest first
    if not candidates:
        return None
    for path in candidates:
        try:
            _restore(checkpoint, path, added_later)
        except (ValueError, AssertionError, IndexError, tf.errors.OpError) as e:
            if _is_damaged(e):
                logging.warning("Checkpoint %s is damaged (%s); trying the one before it", path,
                                " ".join(str(e).split())[:160])
                continue
            reason = " ".join(str(e).split())[:200]
            raise UserError(f"cannot restore checkpoint {path} into {what} ({reason}): use the hparams (game, "
                            "frame size, model) of the run that wrote it, or a new output dir to train afresh") from None
        return path
    directory = manager.directory
    raise UserError(f"no whole checkpoint in {directory}: all {len(candidates)} are damaged (truncated files); "
                    f"move {directory} aside to train that part afresh")


class RunCheckpoint:
    """Checkpoints of named objects (`tf.train.Checkpoint(**objects)`) in `directory`, the newest
    `keep` kept: every loop's and the Estimator's. `restore()` loads the newest whole one and
    returns its path (None before the first save); `save(number)` writes one whole."""

    def __init__(self, directory, keep, what, added_later=(), **objects):
        self.what, self.added_later = what, added_later
        self.checkpoint = tf.train.Checkpoint(**objects)
        self.manager = tf.train.CheckpointManager(self.checkpoint, directory, max_to_keep=keep)

    def restore(self):
        return restore_latest(self.checkpoint, self.manager, self.what, self.added_later)

    def save(self, number):
        return save(self.manager, number)
