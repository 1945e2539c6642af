"""Restoring the newest checkpoint of a run, with one clear error when it does not fit."""

import tensorflow as tf

from rlkit.errors import UserError


def restore_latest(checkpoint, manager, what):
    """Restores `manager`'s newest checkpoint into `checkpoint`; returns whether there was one.

    `what` names the model for the error message when the checkpoint holds other shapes.
    """
    latest = manager.latest_checkpoint
    if not latest:
        return False
    try:
        checkpoint.restore(latest).assert_existing_objects_matched()
    except (ValueError, AssertionError, tf.errors.OpError) as e:
        reason = " ".join(str(e).split())[:200]
        raise UserError(f"cannot restore checkpoint {latest} into {what} ({reason}): use the hparams (game, "
                        "frame size, model) of the run that wrote it, or a new output dir to train afresh") from None
    return True
