"""Trains a world model on collected real experience.

    python -m rlkit.rl.trainer_world_model --data_dir=RUN/data \
        --hparams_set=next_frame_basic_deterministic --output_dir=DIR

Checkpoints go to OUTPUT_DIR, TensorBoard events to OUTPUT_DIR/train (losses, pixel and reward
accuracy, steps/s), OUTPUT_DIR/eval (at the end, on the training data: hold data out by
training a loop instead) and OUTPUT_DIR/dream: after every checkpoint, multi-step
"dream" rollouts, in which the model feeds on its own predictions and the real actions, shown
next to the real frames. Rerunning the same command resumes from the newest checkpoint.
"""


from absl import flags

from rlkit import cli, gcs
from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from rlkit.errors import UserError, run_command
from rlkit.hparams.world_model_sets import WORLD_MODEL_FAMILIES
from rlkit.models.registry import get_model


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("next_frame_basic_deterministic", "Where checkpoints and TensorBoard events go.")
    flags.DEFINE_string("data_dir", None, "Collected experience: the data/ dir of a run (epoch_*/shard_*.npz).")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    data_dir = gcs.local_input(FLAGS.data_dir) if FLAGS.data_dir else ""

    def check(hparams):
        if hparams.get("family") not in WORLD_MODEL_FAMILIES:
            kind = f"loop {hparams.get('loop')!r}" if hparams.get("loop") else f"family {hparams.get('family')!r}"
            raise UserError(f"--hparams_set={FLAGS.hparams_set} is not a world-model set (its {kind}): use one "
                            "such as next_frame_basic_stochastic_discrete, or train a loop with trainer_model_based")
        get_model(hparams.model)
        # Counted as the loop's resume logic counts them: damaged shards are set aside, not stored.
        epochs = sorted({storage.epoch_of(path) for path in storage.list_shards(data_dir)})
        if not sum(storage.stored_steps(data_dir, epoch) for epoch in epochs):
            raise UserError(f"no readable shards in --data_dir={FLAGS.data_dir!r}: point it at the data/ dir of a "
                            "collection (python -m rlkit.rl.collect)")

    with cli.start_run(FLAGS, check=check) as (hparams, output_dir):
        # Imported once the flags are checked: TensorFlow takes about 5 s to load.
        import keras

        from rlkit.rl.loops.world_model_training import (
            actions_and_pixel_values_of,
            evaluate_world_model,
            train_world_model,
            world_model_estimator,
        )

        store = FrameStore(data_dir)
        keras.utils.set_random_seed(FLAGS.seed)
        estimator = world_model_estimator(hparams, output_dir, store.frame_shape, *actions_and_pixel_values_of(data_dir))
        cli.write_operative_config(output_dir)
        train_world_model(estimator, store, FLAGS.seed, hparams.train_steps)
        # A standalone model trains on all the data it is given: it is evaluated on the same.
        evaluate_world_model(estimator, store, FLAGS.seed, None, f"its training data ({FLAGS.data_dir})")


if __name__ == "__main__":
    define_flags()
    run_command(main)
