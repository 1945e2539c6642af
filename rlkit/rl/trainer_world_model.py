"""Trains a world model on collected real experience.

    python -m rlkit.rl.trainer_world_model --data_dir=RUN/data \
        --hparams_set=next_frame_basic_deterministic --output_dir=DIR

Checkpoints go to OUTPUT_DIR, TensorBoard events to OUTPUT_DIR/train (losses, pixel and reward
accuracy, steps/s), OUTPUT_DIR/eval (at the end, on the training data: hold data out by
training a loop instead) and OUTPUT_DIR/dream: after every checkpoint, multi-step
"dream" rollouts, in which the model feeds on its own predictions and the real actions, shown
next to the real frames. Rerunning the same command resumes from the newest checkpoint.
"""


from absl import flags, logging

from rlkit import cli, gcs
from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import action_space_of, pixel_values
from rlkit.errors import UserError
from rlkit.models.registry import get_model

ALE_FULL_ACTION_SET = 18  # every Atari game's actions index into it


def actions_and_pixel_values_of(data_dir):
    """(actions, values per channel) of the game that the run which collected `data_dir` names
    in its hparams.json (ALE's full action set and 256 values when the data has no run next to it)."""
    run = cli.find_saved_hparams(data_dir)
    if run is None or "game" not in run:
        logging.info("No run hparams next to %s: the world model takes ALE's %d actions", data_dir,
                     ALE_FULL_ACTION_SET)
        return ALE_FULL_ACTION_SET, 256
    return int(action_space_of(run)[0].n), pixel_values(run)


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("next_frame_basic_deterministic", "Where checkpoints and TensorBoard events go.")
    flags.DEFINE_string("data_dir", None, "Collected experience: the data/ dir of a run (epoch_*/shard_*.npz).")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    data_dir = gcs.local_input(FLAGS.data_dir) if FLAGS.data_dir else ""

    def check(hparams):
        if "model" not in hparams:
            raise UserError(f"--hparams_set={FLAGS.hparams_set} is not a world-model set (it has no model): use "
                            "one such as next_frame_basic_stochastic_discrete, or train a loop with trainer_model_based")
        get_model(hparams.model)
        # Counted as the loop's resume logic counts them: damaged shards are set aside, not stored.
        epochs = sorted({storage.epoch_of(path) for path in storage.list_shards(data_dir)})
        if not sum(storage.stored_steps(data_dir, epoch) for epoch in epochs):
            raise UserError(f"no readable shards in --data_dir={FLAGS.data_dir!r}: point it at the data/ dir of a "
                            "collection (python -m rlkit.data_generators.collect)")

    with cli.start_run(FLAGS, check=check) as (hparams, output_dir):
        # Imported once the flags are checked: TensorFlow takes about 5 s to load.
        import keras

        from rlkit.rl.world_model_training import evaluate_world_model, train_world_model, world_model_estimator

        store = FrameStore(data_dir)
        keras.utils.set_random_seed(FLAGS.seed)
        estimator = world_model_estimator(hparams, output_dir, store.frame_shape, *actions_and_pixel_values_of(data_dir))
        cli.write_operative_config(output_dir)
        train_world_model(estimator, store, FLAGS.seed, hparams.train_steps)
        # A standalone model trains on all the data it is given: it is evaluated on the same.
        evaluate_world_model(estimator, store, FLAGS.seed, None, f"its training data ({FLAGS.data_dir})")


if __name__ == "__main__":
    define_flags()
    cli.run(main)
