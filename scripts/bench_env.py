"""Agent steps/s of batched Pong with random actions, rlkit against its baselines, in one run.

    python scripts/bench_env.py [--seconds=5]

(a) one gymnasium ALE/Pong-v5 (frameskip=1) in AtariPreprocessing with rlkit's settings,
(b) gymnasium AsyncVectorEnv of 8 of those, (c) ale-py's raw AtariVectorEnv with 8 envs,
(d) rlkit's batched Atari env at 1, 8 and 16 envs (and at 8 with 4-frame stacking).
All at 105x80 RGB, frame skip 4 with max-pool, the same no-op range. Prints d/a, d/b, d/c.
"""

import argparse
import time

import ale_py
import gymnasium as gym
import numpy as np
from ale_py.vector_env import AtariVectorEnv

from rlkit.data_generators.atari import native_noop_max
from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.gym_env import atari_preprocessing
from rlkit.data_generators.make_env import atari_settings, make_batch_env
from rlkit.hparams import create_hparams

HPARAMS = create_hparams("env_atari", "game=pong")
NUM_ACTIONS = 6


def steps_per_second(step_batch, batch_size, seconds):
    """Agent steps/s of calling step_batch(actions) for about `seconds`."""
    rng = np.random.default_rng(0)
    actions = rng.integers(NUM_ACTIONS, size=(1024, batch_size))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step_batch(actions[steps % len(actions)])
        steps += 1
    return steps * batch_size / (time.perf_counter() - start)


def make_gym_pong():
    gym.register_envs(ale_py)
    env = gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
    settings = atari_settings(HPARAMS)
    return atari_preprocessing(settings["frame_height"], settings["frame_width"], settings["grayscale"],
                               settings["frame_skip"], settings["max_num_noops"])(env)


def single_gym():
    env = make_gym_pong()
    env.reset(seed=0)

    def step(actions):
        _, _, terminated, truncated, _ = env.step(int(actions[0]))
        if terminated or truncated:
            env.reset()
    return step, 1, env.close


def async_gym(num_envs):
    env = gym.vector.AsyncVectorEnv([make_gym_pong] * num_envs)
    env.reset(seed=0)
    return env.step, num_envs, env.close


def raw_ale(num_envs):
    env = AtariVectorEnv("pong", num_envs, img_height=HPARAMS.frame_height, img_width=HPARAMS.frame_width,
                         grayscale=False, stack_num=1, frameskip=HPARAMS.frame_skip,
                         noop_max=native_noop_max(HPARAMS.max_num_noops, HPARAMS.frame_skip),
                         reward_clipping=False, use_fire_reset=False, autoreset_mode="SameStep")
    env.reset(seed=0)
    return env.step, num_envs, env.close


def rlkit_env(num_envs, frame_stack=False):
    env = make_batch_env(HPARAMS, num_envs)
    stepper = FrameStack(env, HPARAMS.frame_stack_size) if frame_stack else env
    stepper.reset(seed=0)
    return stepper.step, num_envs, env.close


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="timing per configuration")
    parser.add_argument("--rounds", type=int, default=3,
                        help="configurations take turns this many times; the median counts")
    args = parser.parse_args()
    configs = {
        "(a) gymnasium Pong-v5 + AtariPreprocessing, 1 env": single_gym(),
        "(b) gymnasium AsyncVectorEnv, 8 envs": async_gym(8),
        "(c) ale-py AtariVectorEnv raw, 8 envs": raw_ale(8),
        "(d) rlkit batched Atari, 1 env": rlkit_env(1),
        "(d) rlkit batched Atari, 8 envs": rlkit_env(8),
        "(d) rlkit batched Atari, 16 envs": rlkit_env(16),
        "(d) rlkit batched Atari + 4-frame stack, 8 envs": rlkit_env(8, frame_stack=True),
    }
    for step, batch_size, _ in configs.values():  # warm-up
        steps_per_second(step, batch_size, 0.2)
    # Taking turns spreads any slow spell of a shared machine over every configuration.
    rates = {name: [] for name in configs}
    for _ in range(args.rounds):
        for name, (step, batch_size, _) in configs.items():
            rates[name].append(steps_per_second(step, batch_size, args.seconds / args.rounds))
    for _, _, close in configs.values():
        close()
    results = {name: float(np.median(values)) for name, values in rates.items()}
    for name, rate in results.items():
        spread = ", ".join(f"{v:,.0f}" for v in rates[name])
        print(f"{name:<50} {rate:8,.0f} agent steps/s  (rounds: {spread})")
    a, b, c = (results[name] for name in list(results)[:3])
    d8 = results["(d) rlkit batched Atari, 8 envs"]
    print(f"d8/a = {d8 / a:.2f}  (target >= 2.0)")
    print(f"d8/b = {d8 / b:.2f}  (target >= 1.8)")
    print(f"d8/c = {d8 / c:.2f}  (target >= 0.9)")


if __name__ == "__main__":
    main()
