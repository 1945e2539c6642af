"""World-model quality on held-out real Pong: how far its own rollouts stay right.

    python scripts/bench_world_model_quality.py [--train_steps=1500] [--seed=0] \
        [--data_dir=/tmp/rlkit_wmq_data] [--work_dir=/tmp/rlkit_wmq] [--output=results.json]

1. Collects random-policy Pong once into --data_dir (reused by later runs): data epoch 0 to
   train on and data epoch 1, from other episodes, held out.
2. Trains a world model (--set with --hparams, scaled for this CPU; its schedules are scaled
   to --train_steps as the original's are to its first epoch) for --train_steps steps.
3. From --rollouts random held-out windows, feeds the model its own predictions and the real
   actions for 50 steps (latent bits from the prior at --temperature), and reports
   - pixel accuracy of the predicted frame at steps 1, 12 and 50 (share of pixel channel values
     equal to the real frame's), next to copying the last real context frame;
   - reward accuracy at 12 and 50 as SimPLe defines it: the predicted cumulative reward equals
     the real one at that step.

The same seed and budget give the same numbers on the same machine.
"""

import argparse
import json
import os
import shutil
import time

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import keras
import numpy as np

from rlkit.data_generators.experience import collect_experience
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import frame_shape, make_batch_env
from rlkit.hparams import create_hparams
from rlkit.hparams.registry import apply_overrides
from rlkit.models.world_model import imagine
from rlkit.rl.loops.evaluation import reward_accuracies
from rlkit.rl.loops.world_model_training import window_input_fn, world_model_estimator

HORIZONS = (1, 12, 50)
REWARD_HORIZONS = (12, 50)
# The original's schedules, in steps, and the steps of its first epoch (15,000 x 3) they span.
ORIGINAL_FIRST_EPOCH_STEPS = 45_000
SCHEDULE_STEPS = {"scheduled_sampling_steps": 40_000, "latent_rnn_warmup_steps": 40_000,
                  "discretize_warmup_steps": 40_000, "learning_rate_warmup_steps": 2_000}
# A stochastic discrete model that trains at a few steps/s on 2 CPU cores.
CPU_MODEL = ("hidden_size=32,num_compress_steps=5,filter_double_steps=2,recurrent_state_size=16,"
             "bottleneck_bits=32,latent_discriminator_filters=32,latent_predictor_state_size=64,"
             "num_target_frames=3,batch_size=4")


def collect(data_dir, steps, seed):
    """Random-policy Pong: data epoch 0 (training) and 1 (held out, other episodes)."""
    hparams = create_hparams("env_atari", "game=pong")
    with make_batch_env(hparams, 8) as env:
        collect_experience(env, data_dir, 0, steps, shard_steps=250, seed=seed)
        collect_experience(env, data_dir, 1, steps // 4, shard_steps=250, seed=seed + 7919)
    return hparams


def scaled_hparams(set_name, overrides, train_steps):
    hparams = create_hparams(set_name)
    for name, original in SCHEDULE_STEPS.items():
        if name in hparams:
            hparams.set_hparam(name, max(1, round(original * train_steps / ORIGINAL_FIRST_EPOCH_STEPS)))
    return apply_overrides(hparams, overrides) if overrides else hparams


def quality(model, store, rollouts, temperature, seed):
    context, horizon = model.hparams.num_context_frames, max(HORIZONS)
    windows = store.windows(np.random.default_rng(seed), rollouts, context + horizon, epochs=[1])
    actions = windows["actions"][:, context - 1:context - 1 + horizon]
    real_frames = windows["frames"][:, context:context + horizon]
    real_rewards = windows["rewards"][:, context - 1:context - 1 + horizon]
    keras.utils.set_random_seed(seed)
    frames, rewards, _, _, _ = imagine(model, windows["frames"][:, :context], actions, temperature=temperature,
                                    history_actions=windows["actions"][:, :context - 1])
    last_context = windows["frames"][:, context - 1]
    results = {}
    for n in HORIZONS:
        results[f"pixel_accuracy/at_{n}"] = float(np.mean(frames[:, n - 1] == real_frames[:, n - 1]))
        results[f"copy_last_frame_pixel_accuracy/at_{n}"] = float(np.mean(last_context == real_frames[:, n - 1]))
    accuracies = reward_accuracies(rewards, real_rewards, REWARD_HORIZONS)
    results.update({f"reward_accuracy/at_{n}": accuracies[f"reward_accuracy/at_{n}"] for n in REWARD_HORIZONS})
    # The floor a model that never predicts a reward reaches: most short windows hold none.
    no_reward = reward_accuracies(np.zeros_like(real_rewards), real_rewards, REWARD_HORIZONS)
    results.update({f"no_reward_accuracy/at_{n}": no_reward[f"reward_accuracy/at_{n}"] for n in REWARD_HORIZONS})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="next_frame_basic_stochastic_discrete")
    parser.add_argument("--hparams", default=CPU_MODEL, help="overrides of the set (after scaling)")
    parser.add_argument("--train_steps", type=int, default=1500)
    parser.add_argument("--collect_steps", type=int, default=16_000, help="training agent steps (held out: 1/4)")
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data_dir", default="/tmp/rlkit_wmq_data")
    parser.add_argument("--work_dir", default="/tmp/rlkit_wmq", help="the model's checkpoints (replaced)")
    parser.add_argument("--output", default="", help="also write the results here as JSON")
    args = parser.parse_args()

    env_hparams = collect(args.data_dir, args.collect_steps, args.seed)
    store = FrameStore(args.data_dir)
    hparams = scaled_hparams(args.set, args.hparams, args.train_steps)
    hparams.save_checkpoints_steps = hparams.save_summary_steps = args.train_steps
    keras.utils.set_random_seed(args.seed)
    shutil.rmtree(args.work_dir, ignore_errors=True)
    estimator = world_model_estimator(hparams, args.work_dir, frame_shape(env_hparams), 6, 256)
    start = time.monotonic()
    estimator.train(window_input_fn(store, hparams, args.seed, data_epochs=[0]), args.train_steps)
    seconds = time.monotonic() - start
    results = quality(estimator.model, store, args.rollouts, args.temperature, args.seed)
    results.update(train_steps=args.train_steps, train_seconds=round(seconds, 1), seed=args.seed,
                   parameters=int(sum(np.prod(v.shape) for v in estimator.model.trainable_variables)), hparams=hparams.values())
    print(f"{'horizon':>8} {'model pixel acc':>16} {'copy last frame':>16} {'reward acc':>11} {'no reward':>10}")
    for n in HORIZONS:
        reward, floor = results.get(f"reward_accuracy/at_{n}"), results.get(f"no_reward_accuracy/at_{n}")
        print(f"{n:>8} {results[f'pixel_accuracy/at_{n}']:>16.4f} "
              f"{results[f'copy_last_frame_pixel_accuracy/at_{n}']:>16.4f} "
              f"{'' if reward is None else f'{reward:.3f}':>11} {'' if floor is None else f'{floor:.3f}':>10}")
    print(f"{args.train_steps} steps in {seconds:.0f} s, {results['parameters']:,} parameters, "
          f"{args.rollouts} held-out rollouts at temperature {args.temperature}")
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(results, f, indent=2, default=str)


if __name__ == "__main__":
    main()
