"""PPO training throughput on Pong with the Nature CNN, against the network's compute ceiling.

    python scripts/bench_ppo.py [--iterations=3]

Configuration (rlmf_nature): 8 envs, 128-step rollouts, 4 epochs, minibatch 256, 84x84x4 grayscale.
(a) rlkit's full PPO training: env steps, policy forward passes and updates, agent steps/s;
(b) the compute ceiling: the same updates and forward passes alone, on stored data, no env;
(c) stable-baselines3 PPO with the identical configuration, when stable-baselines3 is installed.
Prints a/b and a/c.
"""

import argparse
import time

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import keras
import tensorflow as tf

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import make_batch_env
from rlkit.hparams import create_hparams
from rlkit.rl.learners.learner import build_learner
from rlkit.rl.loops.rollout import collect_rollout

HPARAMS = create_hparams("rlmf_nature", "game=pong,num_envs=8")


def rlkit_ppo(iterations):
    """(a) agent steps/s of whole PPO iterations, and the last rollout for (b)."""
    keras.utils.set_random_seed(0)
    env = make_batch_env(HPARAMS, HPARAMS.num_envs)
    learner = build_learner(HPARAMS, env.observation_space, env.action_space, seed=0)
    stacked = FrameStack(env, HPARAMS.frame_stack_size)
    observation = stacked.reset(seed=0)
    length = learner.hparams.rollout_length
    rollout, observation, _ = collect_rollout(stacked, observation, learner.act_for_rollout, length)  # warm-up
    learner.update(rollout)
    start = time.perf_counter()
    for _ in range(iterations):
        rollout, observation, _ = collect_rollout(stacked, observation, learner.act_for_rollout, length)
        learner.update(rollout)
    rate = iterations * length * HPARAMS.num_envs / (time.perf_counter() - start)
    env.close()
    return rate, learner, rollout


def compute_ceiling(learner, rollout, iterations):
    """(b) agent steps/s if the env cost nothing: forward passes and updates on stored data."""
    start = time.perf_counter()
    for _ in range(iterations):
        for t in range(rollout.observations.shape[0]):
            learner.act_for_rollout(rollout.observations[t])
        learner.act_for_rollout(rollout.observations[-1])  # the bootstrap value
        learner.update(rollout)
    return iterations * rollout.actions.size / (time.perf_counter() - start)


def stable_baselines3_ppo(iterations):
    """(c) SB3 PPO with the same settings, or None when it is not installed."""
    try:
        import ale_py
        import gymnasium as gym
        from stable_baselines3 import PPO
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import VecFrameStack
    except ImportError:
        return None
    gym.register_envs(ale_py)
    env = VecFrameStack(make_atari_env("PongNoFrameskip-v4", n_envs=8, seed=0), n_stack=4)
    ppo = HPARAMS.ppo
    model = PPO("CnnPolicy", env, n_steps=ppo.rollout_length, batch_size=256, n_epochs=ppo.optimization_epochs,
                learning_rate=ppo.learning_rate, gamma=ppo.gamma, gae_lambda=ppo.gae_lambda,
                clip_range=ppo.clip_coef, ent_coef=ppo.entropy_coef, vf_coef=ppo.value_coef,
                max_grad_norm=ppo.max_gradient_norm, device="cpu", seed=0, verbose=0)
    steps = ppo.rollout_length * 8
    model.learn(steps)  # warm-up
    start = time.perf_counter()
    model.learn(iterations * steps, reset_num_timesteps=False)
    return iterations * steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3, help="timed PPO iterations per measurement")
    args = parser.parse_args()
    ppo = HPARAMS.ppo
    minibatch = HPARAMS.num_envs * ppo.rollout_length // ppo.num_minibatches
    print(f"Pong, {ppo.policy_network}, {HPARAMS.num_envs} envs, {ppo.rollout_length}-step rollouts, "
          f"{ppo.optimization_epochs} epochs, minibatch {minibatch}, TensorFlow {tf.__version__}, "
          f"devices: {', '.join(d.device_type for d in tf.config.list_physical_devices())}")
    a, learner, rollout = rlkit_ppo(args.iterations)
    b = compute_ceiling(learner, rollout, args.iterations)
    c = stable_baselines3_ppo(args.iterations)
    print(f"(a) rlkit PPO training          {a:8.1f} agent steps/s")
    print(f"(b) compute ceiling (no env)    {b:8.1f} agent steps/s")
    print(f"a/b = {a / b:.2f}  (target >= 0.85)")
    if c is None:
        print("(c) stable-baselines3 not installed: a/c not measured")
    else:
        print(f"(c) stable-baselines3 PPO       {c:8.1f} agent steps/s")
        print(f"a/c = {a / c:.2f}  (target >= 1.4)")


if __name__ == "__main__":
    main()
