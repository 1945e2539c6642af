"""Trains a world model on collected real experience.

    python -m rlkit.rl.trainer_world_model --data_dir=RUN/data \
        --hparams_set=next_frame_basic_deterministic --output_dir=DIR

Checkpoints go to OUTPUT_DIR, TensorBoard events to OUTPUT_DIR/train (losses, pixel and reward
accuracy, steps/s), OUTPUT_DIR/eval and OUTPUT_DIR/dream: after every checkpoint, multi-step
"dream" rollouts, in which the model feeds on its own predictions and the real actions, shown
next to the real frames. Rerunning the same command resumes from the newest checkpoint.
"""


import keras
from absl import flags

from rlkit import cli, gcs
from rlkit.data_generators import storage
from rlkit.errors import UserError
from rlkit.models.registry import get_model
from rlkit.rl.world_model_training import train_world_model, world_model_estimator


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_hparams_flags("next_frame_basic_deterministic")
    cli.define_gin_flags()
    flags.DEFINE_string("data_dir", None, "Collected experience: the data/ dir of a run (epoch_*/shard_*.npz).")
    flags.DEFINE_string("output_dir", None, "Where checkpoints and TensorBoard events go.")
    flags.DEFINE_integer("seed", 0, "Seed of the initialisation and the window sampling.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    hparams = cli.load_hparams(FLAGS.hparams_set, FLAGS.hparams)
    get_model(hparams.model)
    data_dir = gcs.local_input(FLAGS.data_dir) if FLAGS.data_dir else None
    if not data_dir or not storage.list_shards(data_dir):
        raise UserError(f"no shards in --data_dir={FLAGS.data_dir!r}: point it at the data/ dir of a "
                        "collection (python -m rlkit.data_generators.collect)")
    with gcs.local_output(FLAGS.output_dir) as output_dir:  # gs:// outputs are uploaded as written
        cli.prepare_output_dir(output_dir, hparams)
        keras.utils.set_random_seed(FLAGS.seed)
        estimator = world_model_estimator(hparams, output_dir)
        train_world_model(estimator, data_dir, FLAGS.seed, hparams.train_steps)

if __name__ == "__main__":
    define_flags()
    cli.run(main)
