"""Trains a world model on collected real experience.

    python -m rlkit.rl.trainer_world_model --data_dir=RUN/data \
        --hparams_set=next_frame_basic_deterministic --output_dir=DIR

Checkpoints go to OUTPUT_DIR, TensorBoard events to OUTPUT_DIR/train (losses, pixel and reward
accuracy, steps/s), OUTPUT_DIR/eval and OUTPUT_DIR/dream: after every checkpoint, multi-step
"dream" rollouts, in which the model feeds on its own predictions and the real actions, shown
next to the real frames. Rerunning the same command resumes from the newest checkpoint.
"""


import keras
import numpy as np
from absl import flags, logging

from rlkit import cli
from rlkit.data_generators import storage
from rlkit.errors import UserError
from rlkit.models.estimator import Estimator
from rlkit.models.registry import get_model


def window_input_fn(data_dir, hparams, seed):
    """Shuffled, repeated batches of context + target windows from `data_dir`."""
    try:
        windows = storage.window_dataset(data_dir, hparams.num_context_frames, hparams.num_target_frames,
                                         seed=seed)
    except ValueError as e:
        raise UserError(str(e)) from None
    dataset = windows.repeat().batch(hparams.batch_size, drop_remainder=True).prefetch(2)
    return lambda: dataset


def dream_image(model, episode, hparams, start=0):
    """Dream and real frames side by side, one row per step, with |dream - real| in a third column.

    The model starts from the episode's real context at `start` and then sees only its own
    predictions and the real actions.
    """
    context = hparams.num_context_frames
    history = episode.frames[start:start + context][None]
    state = model.initial_state(1)
    rows = []
    for step in range(hparams.dream_length):
        t = start + context + step
        frame, _, state = model.next_frame(history, episode.actions[t - 1:t], state)
        frame = frame.numpy()
        real = episode.frames[t]
        difference = np.abs(frame[0].astype(np.int16) - real.astype(np.int16)).astype(np.uint8)
        rows.append(np.concatenate([frame[0], real, difference], axis=1))
        history = np.concatenate([history[:, 1:], frame[:, None]], axis=1)
    return np.concatenate(rows, axis=0)


def dream_episode(data_dir, hparams):
    """The longest stored episode, if it is long enough for a dream rollout."""
    needed = hparams.num_context_frames + hparams.dream_length
    episodes = [e for e in storage.read_rollouts(data_dir).episodes if len(e) >= needed]
    return max(episodes, key=len) if episodes else None


def train_world_model(hparams, data_dir, output_dir, seed):
    """Trains (or resumes) to hparams.train_steps; returns the final evaluation metrics."""
    keras.utils.set_random_seed(seed)
    input_fn = window_input_fn(data_dir, hparams, seed)
    estimator = Estimator(hparams.model, hparams, output_dir,
                          save_checkpoints_steps=hparams.save_checkpoints_steps,
                          save_summary_steps=hparams.save_summary_steps,
                          keep_checkpoints=hparams.keep_checkpoints)
    cli.write_operative_config(output_dir)
    episode = dream_episode(data_dir, hparams)
    if episode is None:
        logging.warning("No stored episode has %d steps: no dream summaries",
                        hparams.num_context_frames + hparams.dream_length)

    def write_dream(step):
        if episode is not None:
            image = dream_image(estimator.model, episode, hparams)
            estimator.write_summaries("dream", step, {}, images={"dream_real_difference": image[None]})

    estimator.train(input_fn, max_steps=hparams.train_steps, after_checkpoint=write_dream)
    results = estimator.evaluate(input_fn, steps=10)
    logging.info("Evaluation at step %d: %s", results["global_step"],
                 ", ".join(f"{k} {v:.4g}" for k, v in results.items()))
    return results


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
    if not FLAGS.data_dir or not storage.list_shards(FLAGS.data_dir):
        raise UserError(f"no shards in --data_dir={FLAGS.data_dir!r}: point it at the data/ dir of a "
                        "collection (python -m rlkit.data_generators.collect)")
    cli.prepare_output_dir(FLAGS.output_dir, hparams)
    train_world_model(hparams, FLAGS.data_dir, FLAGS.output_dir, FLAGS.seed)


if __name__ == "__main__":
    cli.run(main)
