"""Where does a SimPLe or DreamerV2 run's world model drift from the real MinAtar game, object by object?

    python -m rlkit.rl.analysis.check_model_drift --run=RUN [--data_epochs=15] [--rollouts=256] [--horizon=32]
    python -m rlkit.rl.analysis.check_model_drift --run=RUN --wm_dir=WM   # another model of RUN's data (trainer_world_model)
    python -m rlkit.rl.analysis.check_model_drift --run=RUN --frame_decoding=objects   # read its frames another way

From random windows of real data the world model was not trained on (default: the run's last
data epoch, collected after its final world model), steps the model as its env does (from 4 real
frames, then on its own frames) with the real actions, and prints after 1, 2, 4, ... steps, with
the latent sampled at temperature 0 and at 1 (the loop's simulated_temperature):
- per channel (one kind of object each): the cells on in the real frames and in the model's,
  and the cells the two disagree on, means per frame;
- the cumulative reward, real and predicted (likeliest), means per rollout;
- the share of rollouts the model has ended by then (with predict_episode_ends; a real window
  ends at its last step at the earliest, so every earlier end is a false one);
- a last row, step 1 again with each window's action replaced by another one, drawn at random:
  where a channel's cells come out as right as with the real actions, the model ignores the
  action there (a player it does not move as the actions say is one the policy cannot steer).
A policy trained inside the model meets the model's objects, not the real ones: an object that
fades (the model's count falls below the real one) is one the policy never learns to deal with.
"""


import numpy as np
from absl import flags

from rlkit import cli
from rlkit.data_generators.minatar import channel_names, is_minatar_game
from rlkit.errors import UserError, run_command

# TensorFlow and the modules that import it (about 3 s) are imported where they are used, so
# --help and a mistake in the flags are answered at once.


def rollouts(model, windows, context, actions, temperature):
    """The model's frames [N, T, H, W, C], rewards [N, T] and ends [N, T] from the windows'
    context frames through `actions` [N, T], each step on the frames it predicted before."""
    from rlkit.models.world_model import imagine

    frames, rewards, ends, _, _ = imagine(model, windows["frames"][:, :context], actions, temperature=temperature,
                                          history_actions=windows["actions"][:, :context - 1])
    return frames, rewards, ends


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("run", None, "a trainer_model_based output dir of a MinAtar game")
    flags.DEFINE_string("wm_dir", None, "a world model of the run's game to check instead of its own")
    flags.DEFINE_list("data_epochs", None, "comma-separated data epochs (default the last)")
    flags.DEFINE_integer("rollouts", 256, "windows of real data to step the model from")
    flags.DEFINE_integer("horizon", 32, "steps of each rollout")
    flags.DEFINE_integer("seed", 0, "seed of the windows drawn and the other actions")
    flags.DEFINE_enum("frame_decoding", None, ["likeliest", "objects"],
                      "how the model's frames are read off its pixel probabilities (default: its hparams' "
                      "world_model.frame_decoding)")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if not FLAGS.run:
        raise UserError("--run is required: " + FLAGS["run"].help)
    epochs = cli.data_epochs(FLAGS.data_epochs)
    from rlkit.rl.loops.world_model_training import load_loop_run

    hparams, action_space, _, model, store = load_loop_run(FLAGS.run, wm_dir=FLAGS.wm_dir)
    if FLAGS.frame_decoding:  # before the model's step is traced, which reads it
        model.hparams.frame_decoding = FLAGS.frame_decoding
    if not is_minatar_game(hparams.game):
        raise UserError(f"{hparams.game} is not a MinAtar game: its channels are colours, not objects")
    epochs = epochs or [max(e.epoch for e in store.episodes)]
    context = model.hparams.num_context_frames
    windows = store.windows(np.random.default_rng(FLAGS.seed), FLAGS.rollouts, context + FLAGS.horizon, epochs)
    if windows is None:
        raise UserError(f"no episode of data epochs {epochs} has {context + FLAGS.horizon} steps: use a smaller --horizon")
    real = windows["frames"][:, context:] > 0
    real_rewards = np.cumsum(windows["rewards"][:, context - 1:], axis=1)
    names = channel_names(hparams.game)
    steps = [n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n <= FLAGS.horizon]
    episodes = len(np.unique(store.window_starts(context + FLAGS.horizon, epochs)[:, 0]))
    print(f"{FLAGS.run}: {FLAGS.rollouts} rollouts from the {episodes} episodes of data epochs {epochs} with "
          f"{context + FLAGS.horizon} steps; cells on per frame, real / model (cells wrong)")
    num_actions, real_actions = int(action_space.n), windows["actions"][:, context - 1:context]
    other_actions = (real_actions + np.random.default_rng(FLAGS.seed).integers(1, num_actions, real_actions.shape)) % num_actions

    def cells(predicted, n):
        return " | ".join(f"{real[:, n - 1, ..., c].sum((1, 2)).mean():.2f} / {predicted[:, n - 1, ..., c].sum((1, 2)).mean():.2f}"
                          f" ({(real[:, n - 1, ..., c] != predicted[:, n - 1, ..., c]).sum((1, 2)).mean():.2f})"
                          for c in range(len(names)))

    for temperature in (0.0, 1.0):
        frames, rewards, ends = rollouts(model, windows, context, windows["actions"][:, context - 1:-1], temperature)
        print(f"\ntemperature {temperature:g}")
        print("step | " + " | ".join(names) + " | reward, real / model | ended")
        for n in steps:
            print(f"{n} | {cells(frames > 0, n)} | {real_rewards[:, n - 1].mean():.2f} / "
                  f"{np.cumsum(rewards, axis=1)[:, n - 1].mean():.2f} | {ends[:, :n].any(axis=1).mean():.3f}")
        frames, _, _ = rollouts(model, windows, context, other_actions, temperature)
        print(f"1, other actions | {cells(frames > 0, 1)} | |")


if __name__ == "__main__":
    define_flags()
    run_command(main)
