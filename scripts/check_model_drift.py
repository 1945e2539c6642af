"""Where does a SimPLe run's world model drift from the real MinAtar game, object by object?

    python scripts/check_model_drift.py --run=RUN [--data_epochs=15] [--rollouts=256] [--horizon=32]
    python scripts/check_model_drift.py --run=RUN --wm_dir=WM   # another model of RUN's data (trainer_world_model)

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

import argparse

import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)
import numpy as np

from rlkit.data_generators.minatar import channel_names, is_minatar_game
from rlkit.models.world_model import imagine
from rlkit.rl.world_model_training import load_loop_run


def rollouts(model, windows, context, actions, temperature):
    """The model's frames [N, T, H, W, C], rewards [N, T] and ends [N, T] from the windows'
    context frames through `actions` [N, T], each step on the frames it predicted before."""
    frames, rewards, ends, _, _ = imagine(model, windows["frames"][:, :context], actions, temperature=temperature,
                                          history_actions=windows["actions"][:, :context - 1])
    return frames, rewards, ends


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a trainer_model_based output dir of a MinAtar game")
    parser.add_argument("--wm_dir", default=None, help="a world model of the run's game to check instead of its own")
    parser.add_argument("--data_epochs", default=None, help="comma-separated data epochs (default the last)")
    parser.add_argument("--rollouts", type=int, default=256)
    parser.add_argument("--horizon", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    hparams, action_space, _, model, store = load_loop_run(args.run, wm_dir=args.wm_dir)
    if not is_minatar_game(hparams.game):
        raise SystemExit(f"{hparams.game} is not a MinAtar game: its channels are colours, not objects")
    epochs = [int(e) for e in args.data_epochs.split(",")] if args.data_epochs else [max(e.epoch for e in store.episodes)]
    context = hparams.world_model.num_context_frames
    windows = store.windows(np.random.default_rng(args.seed), args.rollouts, context + args.horizon, epochs)
    if windows is None:
        raise SystemExit(f"no episode of data epochs {epochs} has {context + args.horizon} steps: use a smaller --horizon")
    real = windows["frames"][:, context:] > 0
    real_rewards = np.cumsum(windows["rewards"][:, context - 1:], axis=1)
    names = channel_names(hparams.game)
    steps = [n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n <= args.horizon]
    episodes = len(np.unique(store.window_starts(context + args.horizon, epochs)[:, 0]))
    print(f"{args.run}: {args.rollouts} rollouts from the {episodes} episodes of data epochs {epochs} with "
          f"{context + args.horizon} steps; cells on per frame, real / model (cells wrong)")
    num_actions, real_actions = int(action_space.n), windows["actions"][:, context - 1:context]
    other_actions = (real_actions + np.random.default_rng(args.seed).integers(1, num_actions, real_actions.shape)) % num_actions

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
    main()
