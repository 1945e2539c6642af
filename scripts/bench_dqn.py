"""DQN training throughput on Pong with the Nature CNN, against stable-baselines3's DQN.

    python scripts/bench_dqn.py [--steps=3000] [--repeats=3] [--epsilons=1.0,0.1]

Configuration (rlmf_dqn_nature): one env, 84x84x4 grayscale, batch 32, one update every 4 agent
steps, target sync every 10K; learning starts after 1,000 steps, so every timed step includes
updates. (a) rlkit's DQN training (`train_off_policy`: acting, the replay memory writing shards
and sampling, the updates), agent steps/s; (b) stable-baselines3's DQN with the same settings in
the same run, when stable-baselines3 is installed (`pip install stable-baselines3`). Prints a/b.
Both fill their replay with `--steps` steps, then time `--repeats` blocks of `--steps` steps,
alternating a and b so that both see the machine in the same state; each side's rate is the
median of its blocks.

Both act as DQN implementations do: a random action skips the Q-network. So the rate depends on
epsilon, which is held fixed for both, once per value of --epsilons: 1.0 is the start of
training (Nature DQN's epsilon stays above 0.5 for its first 500K agent steps), 0.1 its end.
"""

import argparse
import statistics
import tempfile
import time

import rlkit  # noqa: F401  (before TensorFlow: rlkit turns on TensorFlow's oneDNN CPU kernels)
import keras
import tensorflow as tf

from rlkit.data_generators.batch_env import FrameStack
from rlkit.data_generators.make_env import make_batch_env
from rlkit.data_generators.replay import ReplayMemory
from rlkit.hparams import create_hparams
from rlkit.rl.learners.learner import build_learner
from rlkit.rl.loops.off_policy import train_off_policy


def bench_hparams(epsilon):
    return create_hparams("rlmf_dqn_nature", f"game=pong,dqn.learning_starts=1000,shard_steps=1000,"
                          f"dqn.epsilon_start={epsilon},dqn.epsilon_final={epsilon}")


def rlkit_dqn(steps, epsilon):
    """rlkit's DQN training with its replay filled; returns a function that trains `steps` more
    agent steps and returns their rate."""
    keras.utils.set_random_seed(0)
    hparams = bench_hparams(epsilon)
    env = make_batch_env(hparams, hparams.num_envs)
    learner = build_learner(hparams, env.observation_space, env.action_space, seed=0)
    dqn = learner.hparams
    replay = ReplayMemory(tempfile.mkdtemp(), env.num_envs, hparams.frame_stack_size, dqn.replay_capacity,
                          hparams.shard_steps, dqn.n_step, env.clip_rewards, dqn.prioritized)
    stacked = FrameStack(env, hparams.frame_stack_size)
    env_steps = tf.Variable(0, dtype=tf.int64)
    writer = tf.summary.create_noop_writer()
    total_steps = 100 * steps  # the learning-rate schedule's length: constant for Nature DQN anyway

    def timed_block():
        start = time.perf_counter()
        train_off_policy(learner, stacked, replay, env_steps, int(env_steps) + steps, total_steps, 0, writer)
        return steps / (time.perf_counter() - start)

    train_off_policy(learner, stacked, replay, env_steps, steps, total_steps, 0, writer)  # fills the replay
    return timed_block


def stable_baselines3_dqn(steps, epsilon):
    """SB3's DQN with the same settings and its replay filled, as `rlkit_dqn`; None when
    stable-baselines3 is not installed."""
    try:
        import ale_py
        import gymnasium as gym
        from stable_baselines3 import DQN
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import VecFrameStack
    except ImportError:
        return None
    gym.register_envs(ale_py)
    env = VecFrameStack(make_atari_env("PongNoFrameskip-v4", n_envs=1, seed=0), n_stack=4)
    dqn = bench_hparams(epsilon).dqn
    model = DQN("CnnPolicy", env, learning_rate=dqn.learning_rate, buffer_size=100_000, learning_starts=1000,
                batch_size=dqn.batch_size, gamma=dqn.gamma, train_freq=dqn.update_period, gradient_steps=1,
                target_update_interval=dqn.target_update_period, exploration_initial_eps=epsilon,
                exploration_final_eps=epsilon, optimize_memory_usage=False, device="cpu", seed=0, verbose=0)

    def timed_block():
        start = time.perf_counter()
        model.learn(steps, reset_num_timesteps=False)
        return steps / (time.perf_counter() - start)

    model.learn(steps)  # fills the replay
    return timed_block


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="agent steps per timed block")
    parser.add_argument("--repeats", type=int, default=3, help="timed blocks per side and epsilon")
    parser.add_argument("--epsilons", default="1.0,0.1", help="training epsilons to measure at")
    args = parser.parse_args()
    hparams = bench_hparams(1.0)
    dqn = hparams.dqn
    print(f"Pong, {dqn.policy_network}, {hparams.num_envs} env, batch {dqn.batch_size}, an update every "
          f"{dqn.update_period} steps, TensorFlow {tf.__version__}, "
          f"devices: {', '.join(d.device_type for d in tf.config.list_physical_devices())}; "
          f"median of {args.repeats} blocks of {args.steps} agent steps")
    for epsilon in [float(e) for e in args.epsilons.split(",")]:
        a, b = rlkit_dqn(args.steps, epsilon), stable_baselines3_dqn(args.steps, epsilon)
        a_rates, b_rates = [], []
        for _ in range(args.repeats):
            a_rates.append(a())
            if b is not None:
                b_rates.append(b())
        rates = lambda values: f"{statistics.median(values):8.1f} agent steps/s  (blocks: " + \
            ", ".join(f"{v:.1f}" for v in values) + ")"
        print(f"epsilon {epsilon}: (a) rlkit DQN training          {rates(a_rates)}")
        if b is None:
            print(f"epsilon {epsilon}: (b) stable-baselines3 not installed: a/b not measured")
        else:
            print(f"epsilon {epsilon}: (b) stable-baselines3 DQN       {rates(b_rates)}")
            print(f"epsilon {epsilon}: a/b = {statistics.median(a_rates) / statistics.median(b_rates):.2f}"
                  "  (target >= 1.3)")


if __name__ == "__main__":
    main()
