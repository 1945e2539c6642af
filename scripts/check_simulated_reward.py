"""Does PPO learn more inside a SimPLe run's world model from the reward head's mean than from
its likeliest class (`simulated_reward=expected` against SimPLe's `likeliest`)?

    python scripts/check_simulated_reward.py --run=RUN [--iterations=250] [--seeds=0,1]

RUN is a trainer_model_based output dir. For each kind of simulated reward and each seed, a
fresh learner of the run's set trains --iterations PPO iterations inside the run's newest world
model, its rollouts started from the run's stored real frames as the loop starts them, and is
then evaluated on the real env with the run's evaluation protocol. The world model and the data
stay fixed, so this is one epoch of the loop's policy stage with only the reward changed.
Printed per kind and seed: the share of training rollouts with any reward and their mean reward,
the policy's entropy at the end, and the real evaluation returns at each temperature.
"""

import argparse
import tempfile

import rlkit  # noqa: F401  (before TensorFlow: rlkit's TensorFlow settings)
import keras
import numpy as np
import tensorflow as tf

from rlkit.data_generators.batch_env import FrameStack
from rlkit.rl import evaluation
from rlkit.rl.learner import build_learner
from rlkit.rl.on_policy import train_on_policy
from rlkit.rl.plot import read_scalar
from rlkit.rl.simulated_env import SIMULATED_REWARDS, SimulatedBatchEnv
from rlkit.rl.trainer_model_based import simulated_iterations_target
from rlkit.rl.world_model_training import load_loop_run


def train_and_evaluate(hparams, model, store, action_space, meanings, reward, iterations, seed):
    """(training rollouts' rewards [iterations], the last entropy, {eval cell: mean return})."""
    keras.utils.set_random_seed(seed)
    env = SimulatedBatchEnv(model, store, hparams.simulated_num_envs, action_space, meanings,
                            hparams.simulated_temperature, reward=reward)
    learner = build_learner(hparams, env.observation_space, action_space, seed)
    done_iterations, steps = tf.Variable(0, dtype=tf.int64), tf.Variable(0, dtype=tf.int64)
    log_dir = tempfile.mkdtemp(prefix=f"check_simulated_reward_{reward}_")
    writer = tf.summary.create_file_writer(log_dir)
    # The learning rate as in the loop's first epoch: its schedule runs over the whole run.
    total = simulated_iterations_target(hparams, hparams.epochs - 1)
    train_on_policy(learner, FrameStack(env, hparams.frame_stack_size), done_iterations, steps, iterations, total,
                    seed, writer, restart_every_rollout=True, log_every=max(1, iterations // 5))
    writer.flush()
    rollout_rewards = read_scalar(log_dir, "charts/rollout_reward")[1]
    entropy = read_scalar(log_dir, "losses/entropy")[1][-1]
    results, _ = evaluation.evaluate_policy(hparams, learner.act, seed)
    returns = {}
    for temperature, max_noops in evaluation.eval_grid(hparams):
        label = f"temperature {temperature:g}" + (f", {max_noops} no-ops" if max_noops else "")
        returns[label] = results[evaluation.config_name(temperature, max_noops)]["mean_unclipped"]
    return rollout_rewards, entropy, returns


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a trainer_model_based output dir")
    parser.add_argument("--iterations", type=int, default=250, help="PPO iterations inside the world model")
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()

    hparams, action_space, meanings, model, store = load_loop_run(args.run)
    rows = []
    for reward in SIMULATED_REWARDS:
        for seed in (int(s) for s in args.seeds.split(",")):
            rollout_rewards, entropy, returns = train_and_evaluate(hparams, model, store, action_space, meanings,
                                                                   reward, args.iterations, seed)
            rows.append((reward, seed, rollout_rewards, entropy, returns))
    print(f"{args.run}: {args.iterations} PPO iterations of {hparams.simulated_num_envs} x "
          f"{hparams.ppo.rollout_length} steps inside its world model, then the real env")
    for reward, seed, rollout_rewards, entropy, returns in rows:
        cells = ", ".join(f"{label}: {value:.2f}" for label, value in returns.items())
        print(f"simulated_reward={reward} seed {seed}: rollouts with a reward {np.mean(rollout_rewards != 0):.3f}, "
              f"mean reward per rollout {np.mean(rollout_rewards):.3f}; final entropy {entropy:.2f}; real returns "
              f"{cells}")


if __name__ == "__main__":
    main()
