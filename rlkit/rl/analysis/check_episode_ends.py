"""Does a world model with `predict_episode_ends` end episodes where the real game did?

    python -m rlkit.rl.trainer_world_model --hparams_set=next_frame_minatar \
        --hparams=predict_episode_ends=True,train_steps=4000 --data_dir=RUN/data --output_dir=WM
    python -m rlkit.rl.analysis.check_episode_ends --wm_dir=WM --data_dir=RUN/data [--data_epochs=4] [--episodes=512]
    python -m rlkit.rl.analysis.check_episode_ends --wm_dir=RUN/world_model --data_dir=RUN/data   # a loop run's own
    python -m rlkit.rl.analysis.check_episode_ends --wm_dir=WM --data_dir=DIR --frame_decoding=objects   # read its frames another way

Steps the model as the world model's env does (from 4 stored frames 4, and then 7, steps before
the end of each complete episode, then on its own frames, with the real actions) and prints how
often it flags the real last frame, the 3 frames before it and those earlier (a model with
`end_target=ending_step` flags the step taken on a frame: it is stepped once more, with the
action that ended the episode). Then, each
predicted from the real frames before it, the end head's probability on the real last frames,
the 3 before them and as many other stored frames, and how often a last frame scores above
another (ROC AUC; 0.5 is chance): a head that never flags an end may still sense where they are
(then the flag's threshold is the limit), or sense nothing (then its training is).
"""


import numpy as np
from absl import flags

from rlkit import cli
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import check_stored_data
from rlkit.errors import UserError, run_command
from rlkit.rl.analysis.check_rewards import ranked_above, real_steps
from rlkit.rl.loops import trains_world_model

# TensorFlow and the modules that import it (about 3 s) are imported where they are used, so
# --help and a mistake in the flags are answered at once.


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("wm_dir", None, "a world model dir (trainer_world_model's, or a loop run's world_model/)")
    flags.DEFINE_string("data_dir", None, "the data dir its real episodes come from")
    flags.DEFINE_list("data_epochs", None, "comma-separated data epochs (default all)")
    flags.DEFINE_integer("episodes", 512, "complete episodes to check at most")
    flags.DEFINE_enum("frame_decoding", None, ["likeliest", "objects"],
                      "how the model's frames are read off its pixel probabilities (default: its hparams' "
                      "world_model.frame_decoding)")


FLAGS = flags.FLAGS


def end_probabilities(model, store, frames_at, context, ends_are):
    """[N] the model's P(end) for each stored (episode, position) of `frames_at`: with ends_are
    "last_frame", that it is its episode's last, predicted from the `context` real frames before
    it (padded at the episode's start) and their actions; with "ending_step", that the step
    taken on it ends the episode, from the frames up to it and its action."""
    before = 1 if ends_are == "last_frame" else 0
    steps = [(episode, position - before) for episode, position in frames_at]
    return np.concatenate([model.end_probabilities(frames, actions, state, 0.0).numpy()
                           for _, frames, actions, state in real_steps(model, store, steps, context, 0.0)])


def main(argv):
    del argv
    if not FLAGS.wm_dir:
        raise UserError("--wm_dir is required: " + FLAGS["wm_dir"].help)
    if not FLAGS.data_dir:
        raise UserError("--data_dir is required: " + FLAGS["data_dir"].help)
    epochs = cli.data_epochs(FLAGS.data_epochs)
    hparams = cli.world_model_hparams(FLAGS.wm_dir)  # a world model's own, or its loop run's
    if trains_world_model(hparams):  # a loop run's world model: the data must have its frames
        check_stored_data(hparams, FLAGS.data_dir, "--data_dir",
                          remedy=f"give the data/ dir of a {hparams.game} run with the world model's frames")
        hparams = hparams.world_model
    from rlkit.models.world_model import end_target, imagine
    from rlkit.rl.loops.world_model_training import actions_and_pixel_values_of, load_world_model

    store = FrameStore(FLAGS.data_dir, epochs)
    num_actions, pixel_values = actions_and_pixel_values_of(FLAGS.data_dir)
    if FLAGS.frame_decoding:  # before the model's step is traced, which reads it
        hparams.frame_decoding = FLAGS.frame_decoding
    model = load_world_model(hparams, FLAGS.wm_dir, store.frame_shape, num_actions, pixel_values)
    context, steps = hparams.num_context_frames, 4
    ends_are = end_target(hparams)
    # From two distances before the end: a model whose ends come a fixed number of steps after
    # its start (ends fall on a training window's last target, so the model can learn when, not
    # where) flags the last frame from one distance only.
    for distance in (steps, 2 * steps - 1):
        windows = [store.window(i, len(e) - context - distance, context + distance)
                   for i, e in enumerate(store.episodes) if e.complete and len(e) > distance][:FLAGS.episodes]
        if not windows:
            raise UserError(f"no complete episode in {FLAGS.data_dir} has more than {distance} steps")
        frames, actions = np.stack([w["frames"] for w in windows]), np.stack([w["actions"] for w in windows])
        # The step that predicts the last frame, or with ending steps the one taken on it, is the last.
        rollout_steps = distance + (ends_are == "ending_step")
        _, _, flagged, _, _ = imagine(model, frames[:, :context], actions[:, context - 1:context - 1 + rollout_steps],
                                      temperature=0.0, history_actions=actions[:, :context - 1])
        earlier = flagged[:, :-steps].mean() if rollout_steps > steps else 0.0
        print(f"{len(windows)} episodes from {distance} steps before their end: end flagged at the real last "
              f"frame {flagged[:, -1].mean():.3f}, at the {steps - 1} frames before it "
              f"{flagged[:, -steps:-1].mean():.3f}, earlier {earlier:.3f}")

    complete = [(i, len(e)) for i, e in enumerate(store.episodes) if e.complete and len(e) > steps][:FLAGS.episodes]
    last = end_probabilities(model, store, [(i, length - 1) for i, length in complete], context, ends_are)
    before = end_probabilities(model, store, [(i, length - 1 - d) for i, length in complete
                                              for d in range(1, steps)], context, ends_are)
    rng = np.random.default_rng(0)
    others = [(i, int(rng.integers(1, len(e) - steps))) for i, e in enumerate(store.episodes) if len(e) > steps + 1]
    other = end_probabilities(model, store, [others[j] for j in rng.integers(len(others), size=len(before))],
                              context, ends_are)
    print(f"P(end) from real frames: at the real last frames {last.mean():.3f} (above 0.5: {np.mean(last > 0.5):.3f}), "
          f"at the {steps - 1} before them {before.mean():.3f}, at {len(other)} other frames {other.mean():.4f}; "
          f"last above other (AUC) {ranked_above(last, other):.3f}")


if __name__ == "__main__":
    define_flags()
    run_command(main)
