"""TensorBoard summaries: every rlkit command writes its scalars and images through here."""

import tensorflow as tf


def write_summaries(writer, step, scalars, images=None):
    """Scalars (and optional uint8 image batches [B, H, W, C]) at `step`, flushed at once."""
    with writer.as_default(step=step):
        for tag, value in scalars.items():
            tf.summary.scalar(tag, value)
        for tag, value in (images or {}).items():
            tf.summary.image(tag, value, max_outputs=len(value))
    writer.flush()
