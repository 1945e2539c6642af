"""Does a world model with `predict_episode_ends` end episodes where the real game did?

    python -m rlkit.rl.trainer_world_model --hparams_set=next_frame_minatar \
        --hparams=predict_episode_ends=True,train_steps=4000 --data_dir=RUN/data --output_dir=WM
    python scripts/check_episode_ends.py --wm_dir=WM --data_dir=RUN/data [--data_epochs=4] [--episodes=512]
    python scripts/check_episode_ends.py --wm_dir=RUN/world_model --data_dir=RUN/data   # a loop run's own

Steps the model as the world model's env does (from 4 stored frames 8 steps before the end of
each complete episode, then on its own frames, with the real actions) and prints how often it
flags the real last frame and the 3 frames before it.
"""

import argparse

import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)
import numpy as np

from rlkit import cli
from rlkit.data_generators.frame_store import FrameStore
from rlkit.models.world_model import imagine
from rlkit.rl.trainer_world_model import actions_and_pixel_values_of
from rlkit.rl.world_model_training import load_world_model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wm_dir", required=True)
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--data_epochs", default=None, help="comma-separated data epochs (default all)")
    parser.add_argument("--episodes", type=int, default=512)
    args = parser.parse_args()
    hparams = cli.find_saved_hparams(args.wm_dir)  # a world model's own, or its loop run's
    hparams = hparams.world_model if "world_model" in hparams else hparams
    epochs = [int(e) for e in args.data_epochs.split(",")] if args.data_epochs else None
    store = FrameStore(args.data_dir, epochs)
    num_actions, pixel_values = actions_and_pixel_values_of(args.data_dir)
    model = load_world_model(hparams, args.wm_dir, store.frame_shape, num_actions, pixel_values)
    context, steps = hparams.num_context_frames, 4
    windows = [store.window(i, len(e) - context - steps, context + steps) for i, e in enumerate(store.episodes)
               if e.complete and len(e) > steps][:args.episodes]
    frames, actions = np.stack([w["frames"] for w in windows]), np.stack([w["actions"] for w in windows])
    _, _, flags, _, _ = imagine(model, frames[:, :context], actions[:, context - 1:context - 1 + steps],
                                temperature=0.0, history_actions=actions[:, :context - 1])
    print(f"{len(windows)} episodes: end flagged at the real last frame {flags[:, -1].mean():.3f}, "
          f"at the {steps - 1} frames before it {flags[:, :-1].mean():.3f}")


if __name__ == "__main__":
    main()
