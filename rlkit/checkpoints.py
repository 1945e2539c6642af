"""Restoring the newest checkpoint of a run, with one clear error when it does not fit."""

import tensorflow as tf

from rlkit.errors import UserError


def restore_latest(checkpoint, manager, what, added_later=()):
    """Restores `manager`'s newest checkpoint into `checkpoint`; returns whether there was one.

    `what` names the model for the error message when the checkpoint holds other shapes.
    added_later: names of `checkpoint`'s counters that a later rlkit added. A checkpoint written
    before them restores without them (they keep their initial values), so that runs started by
    an older rlkit resume; every other object must match.
    """
    latest = manager.latest_checkpoint
    if not latest:
        return False
    try:
        stored = {name.split("/")[0] for name, _ in tf.train.list_variables(latest)}
        missing = [name for name in added_later if name not in stored]
        if missing:  # restore through a view without them
            checkpoint = tf.train.Checkpoint(**{name: value for name, value in vars(checkpoint).items()
                                                if not name.startswith("_") and name not in missing})
        checkpoint.restore(latest).assert_existing_objects_matched()
    except (ValueError, AssertionError, tf.errors.OpError) as e:
        reason = " ".join(str(e).split())[:200]
        raise UserError(f"cannot restore checkpoint {latest} into {what} ({reason}): use the hparams (game, "
                        "frame size, model) of the run that wrote it, or a new output dir to train afresh") from None
    return True
