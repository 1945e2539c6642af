"""Schedules shared by the learners: learning rates and exploration."""


def learning_rate_at(hparams, progress):
    """The learning rate `progress` (0..1) of the way through training, by the set's
    `learning_rate` and `learning_rate_schedule` (constant, or linear decay to 0)."""
    if hparams.learning_rate_schedule == "constant":
        return hparams.learning_rate
    if hparams.learning_rate_schedule == "linear":
        return hparams.learning_rate * (1.0 - progress)
    raise ValueError(f"unknown learning_rate_schedule {hparams.learning_rate_schedule!r} "
                     "(use constant or linear)")


def linear_decay(start, final, duration, step):
    """From `start` at step 0 linearly to `final` at `duration`, then `final` (exploration
    schedules: DQN's epsilon, NAF's noise)."""
    return start + min(1.0, step / max(duration, 1)) * (final - start)
