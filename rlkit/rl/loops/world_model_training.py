"""World-model training on stored real experience, with dream rollouts in TensorBoard.

Used by `trainer_world_model` (one training run) and by the model-based loop (once per epoch,
to a growing step target); `load_loop_run` opens a loop run for the scripts that probe it.
"""

import os

import numpy as np
import tensorflow as tf
from absl import logging

from rlkit.errors import UserError
from rlkit.models.estimator import Estimator
from rlkit.models.world_model import imagine
from rlkit.rl.loops import trains_world_model
from rlkit.video import display_frame

ALE_FULL_ACTION_SET = 18  # every Atari game's actions index into it


def window_input_fn(store, hparams, seed, data_epochs=None, training=True):
    """Shuffled, repeated batches of context + target windows from a FrameStore. A model that
    predicts episode ends also learns from windows at episodes' starts (their context padded), so
    that episodes shorter than a window, and their ends, are in the data. In training, the set's
    rewarded_window_share of the windows hold a reward and its ending_window_share an episode's
    end; evaluation sees windows as they come. A SimPLe model whose end head predicts ending
    steps (end_target=ending_step) also learns from windows past episodes' ends: a target may
    be the step taken on a last frame. The RSSM, whose ends are ending steps too, learns them
    inside its windows."""
    past_end = hparams.get("end_target") == "ending_step"
    try:
        windows = store.window_dataset(hparams.num_context_frames, hparams.num_target_frames, seed=seed,
                                       epochs=data_epochs, pad_starts=hparams.predict_episode_ends,
                                       rewarded_share=hparams.rewarded_window_share if training else 0.0,
                                       ending_share=hparams.ending_window_share if training else 0.0,
                                       past_end=past_end)
    except ValueError as e:
        raise UserError(str(e)) from None
    dataset = windows.repeat().batch(hparams.batch_size, drop_remainder=True).prefetch(2)
    return lambda: dataset


def dream_image(model, window, hparams):
    """Dream and real frames side by side, one row per step, with |dream - real| in a third column.

    The model starts from the window's real context and then sees only its own predictions and
    the window's real actions.
    """
    context = hparams.num_context_frames  # the window holds context + dream_length steps
    # The first predicted frame follows the action taken on the last context frame.
    dream, _, _, _, _ = imagine(model, window["frames"][None, :context], window["actions"][None, context - 1:-1],
                             history_actions=window["actions"][None, :context - 1])
    real = window["frames"][context:]
    difference = np.abs(dream[0].astype(np.int16) - real.astype(np.int16)).astype(np.uint8)
    return np.concatenate(np.concatenate([display_frame(f) for f in (dream[0], real, difference)], axis=2), axis=0)


def dream_window(store, hparams, data_epochs=None):
    """The opening of the longest stored episode, if it is long enough for a dream rollout."""
    length = hparams.num_context_frames + hparams.dream_length
    episodes = store.chosen_episodes(data_epochs, length)
    if not episodes:
        return None
    longest = max(episodes, key=lambda i: len(store.episodes[i]))
    return store.window(longest, 0, length)


def world_model_estimator(hparams, output_dir, frame_shape, num_actions, pixel_values):
    """The Estimator of a world model set for an env of (H, W, C) frames whose channels take
    `pixel_values` values and `num_actions` actions, checkpointing into `output_dir`."""
    return Estimator(hparams.model, hparams, output_dir, model_args=(frame_shape, num_actions, pixel_values),
                     save_checkpoints_steps=hparams.save_checkpoints_steps,
                     save_summary_steps=hparams.save_summary_steps,
                     keep_checkpoints=hparams.keep_checkpoints, mixed_precision=hparams.mixed_precision)


def train_world_model(estimator, store, seed, max_steps, data_epochs=None):
    """Trains (or resumes) to global step `max_steps` on the `data_epochs` (default all) of a
    FrameStore, with dream summaries at every checkpoint."""
    hparams = estimator.hparams
    input_fn = window_input_fn(store, hparams, seed, data_epochs)
    window = dream_window(store, hparams, data_epochs)
    if window is None:
        logging.warning("No stored episode has %d steps: no dream summaries",
                        hparams.num_context_frames + hparams.dream_length)

    def write_dream(step):
        if window is not None:
            image = dream_image(estimator.model, window, hparams)
            estimator.write_summaries("dream", step, {}, images={"dream_real_difference": image[None]})

    estimator.train(input_fn, max_steps=max_steps, after_checkpoint=write_dream)


def evaluate_world_model(estimator, store, seed, data_epochs, description, batches=10):
    """The model's losses and accuracies as SimPLe evaluated them (prior bits, later targets
    from its own predictions) on `batches` batches of windows from `data_epochs`; written to
    TensorBoard (model_dir/eval) and returned. `description` says what the data is."""
    results = estimator.evaluate(window_input_fn(store, estimator.hparams, seed, data_epochs, training=False),
                                 steps=batches)
    logging.info("World model at step %d on %s: %s", results["global_step"], description,
                 ", ".join(f"{k} {v:.4g}" for k, v in results.items() if k != "global_step"))
    return results


def load_world_model(hparams, model_dir, frame_shape, num_actions, pixel_values):
    """The world model trained in `model_dir` (its newest checkpoint), ready for `imagine`."""
    estimator = Estimator(hparams.model, hparams, model_dir, model_args=(frame_shape, num_actions, pixel_values),
                          mixed_precision=hparams.mixed_precision)
    length = hparams.num_context_frames + hparams.num_target_frames
    example = dict(frames=tf.zeros((1, length) + tuple(frame_shape), tf.uint8),
                   actions=tf.zeros([1, length], tf.int32), rewards=tf.zeros([1, length], tf.int32),
                   ends=tf.zeros([1, length], tf.int32), stored=tf.ones([1, length], tf.int32))
    if not estimator.restore(example):
        raise UserError(f"no world model checkpoint in {model_dir!r}: point --wm_dir at the world_model/ "
                        "dir of a trainer_model_based or trainer_world_model run")
    return estimator.model


def actions_and_pixel_values_of(data_dir):
    """(actions, values per channel) of the game that the run which collected `data_dir` names
    in its hparams.json (ALE's full action set and 256 values when the data has no run next to it)."""
    from rlkit import cli
    from rlkit.data_generators.make_env import action_space_of, pixel_values

    run = cli.find_saved_hparams(data_dir)
    if run is None or "game" not in run:
        logging.info("No run hparams next to %s: the world model takes ALE's %d actions", data_dir,
                     ALE_FULL_ACTION_SET)
        return ALE_FULL_ACTION_SET, 256
    return int(action_space_of(run)[0].n), pixel_values(run)


def load_loop_run(run_dir, data_epochs=None, wm_dir=None):
    """What scripts probing a trainer_model_based run need: (its saved hparams, the game's action
    space and action meanings, its newest world model, or the one in `wm_dir` (trained apart on
    the run's data: its own hparams), a FrameStore of its data: the epochs `data_epochs`, default
    all)."""
    from rlkit import cli
    from rlkit.data_generators.frame_store import FrameStore
    from rlkit.data_generators.make_env import (
        action_space_of,
        check_stored_data,
        frame_shape,
        pixel_values,
    )

    hparams = cli.saved_hparams(run_dir)
    if hparams is None:
        raise UserError(f"no rlkit run in --run={run_dir!r} (no {cli.HPARAMS_FILE}): point it at a "
                        "trainer_model_based output dir")
    action_space, meanings = action_space_of(hparams)
    if wm_dir:
        model_hparams = cli.world_model_hparams(wm_dir)  # a world model's own, or its loop run's
        if trains_world_model(model_hparams):  # a loop run's: its frames must be its data's
            check_stored_data(model_hparams, os.path.join(run_dir, "data"), "--run",
                              remedy=f"check a world model of {hparams.game} (--wm_dir), or a run of {model_hparams.game}")
            model_hparams = model_hparams.world_model
    elif trains_world_model(hparams):
        model_hparams = hparams.world_model
    else:  # data alone (collect's, a Dreamer run's): whose world model is named apart
        raise UserError(f"{run_dir} has no SimPLe world model (its hparams.json has no world_model): "
                        "pass --wm_dir=DIR, a world model trained on its data (trainer_world_model), "
                        "or --run=DIR of a trainer_model_based SimPLe run")
    model = load_world_model(model_hparams, wm_dir or os.path.join(run_dir, "world_model"), frame_shape(hparams),
                             int(action_space.n), pixel_values(hparams))
    return hparams, action_space, meanings, model, FrameStore(os.path.join(run_dir, "data"), data_epochs)
