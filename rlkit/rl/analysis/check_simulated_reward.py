"""Does PPO learn more inside a SimPLe run's world model with its policy stage changed: from the
reward head's mean rather than its likeliest class (`simulated_reward=expected` against SimPLe's
`likeliest`, the default comparison), or from shorter simulated rollouts, say?

    python -m rlkit.rl.analysis.check_simulated_reward --run=RUN [--iterations=250] [--seeds=0,1]
        [--variants="simulated_reward=likeliest;simulated_reward=expected"] [--wm_dir=WM]

RUN is a trainer_model_based output dir. For each variant (overrides of the run's hparams,
';' between variants) and each seed, a fresh learner trains --iterations PPO iterations inside
the run's newest world model (or WM's, trained apart on the run's data), its rollouts started
from the run's stored real frames as the loop starts them, and is then evaluated on the real env
with the run's evaluation protocol. The world model and the data stay fixed, so this is one
epoch of the loop's policy stage with only the variant's hparams changed. Printed per variant
and seed: the share of training rollouts with any reward and their mean reward, the policy's
entropy at the end, and the real evaluation returns at each temperature.
"""

import tempfile

import numpy as np
from absl import flags

from rlkit.data_generators.batch_env import FrameStack
from rlkit.errors import UserError, run_command
from rlkit.hparams.registry import apply_overrides
from rlkit.hparams.rlmb_sets import SIMULATED_REWARDS
from rlkit.rl.experiments.curves import read_scalar
from rlkit.rl.learners.learner import build_learner
from rlkit.rl.loops.simple import simulated_iterations_target

# TensorFlow and the modules that import it (about 3 s) are imported where they are used, so
# --help and a mistake in the flags are answered at once.


def train_and_evaluate(hparams, model, store, action_space, meanings, iterations, seed):
    """(training rollouts' rewards [iterations], the last entropy, {eval cell: mean return})."""
    import keras
    import tensorflow as tf

    from rlkit.rl.loops import evaluation
    from rlkit.rl.loops.on_policy import train_on_policy
    from rlkit.rl.loops.simulated_env import SimulatedBatchEnv

    keras.utils.set_random_seed(seed)
    env = SimulatedBatchEnv(model, store, hparams.simulated_num_envs, action_space, meanings,
                            hparams.simulated_temperature, reward=hparams.simulated_reward)
    learner = build_learner(hparams, env.observation_space, action_space, seed)
    done_iterations, steps = tf.Variable(0, dtype=tf.int64), tf.Variable(0, dtype=tf.int64)
    # The summaries are read back once and then removed: a check leaves nothing behind in /tmp.
    with tempfile.TemporaryDirectory(prefix="check_simulated_reward_") as log_dir:
        writer = tf.summary.create_file_writer(log_dir)
        # The learning rate as in the loop's first epoch: its schedule runs over the whole run.
        total = simulated_iterations_target(hparams, hparams.epochs - 1)
        train_on_policy(learner, FrameStack(env, hparams.frame_stack_size), done_iterations, steps, iterations, total,
                        seed, writer, restart_every_rollout=True, log_every=max(1, iterations // 5))
        writer.close()
        rollout_rewards = read_scalar(log_dir, "charts/rollout_reward")[1]
        entropy = read_scalar(log_dir, "losses/entropy")[1][-1]
    results, _ = evaluation.evaluate_policy(hparams, learner.act, seed)
    returns = {}
    for temperature, max_noops in evaluation.eval_grid(hparams):
        label = f"temperature {temperature:g}" + (f", {max_noops} no-ops" if max_noops else "")
        returns[label] = results[evaluation.config_name(temperature, max_noops)]["mean_unclipped"]
    return rollout_rewards, entropy, returns


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("run", None, "a trainer_model_based output dir")
    flags.DEFINE_integer("iterations", 250, "PPO iterations inside the world model")
    flags.DEFINE_string("seeds", "0,1", "comma-separated seeds of the PPO runs inside the world model")
    flags.DEFINE_string("variants", ";".join(f"simulated_reward={reward}" for reward in SIMULATED_REWARDS),
                        "';'-separated variants, each overrides of the run's hparams ('name=value,...')")
    flags.DEFINE_string("wm_dir", None, "a world model trained apart on the run's data, instead of the run's own")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if not FLAGS.run:
        raise UserError("--run is required: " + FLAGS["run"].help)
    from rlkit.rl.loops.world_model_training import load_loop_run

    hparams, action_space, meanings, model, store = load_loop_run(FLAGS.run, wm_dir=FLAGS.wm_dir)
    if hparams.get("loop") != "simple":  # data alone (collect's): no loop settings to train PPO with
        raise UserError(f"{FLAGS.run} is not a trainer_model_based SimPLe run: this check trains PPO inside "
                        "the world model with the run's loop settings; pass --run=DIR of such a run")
    variants = [variant.strip() for variant in FLAGS.variants.split(";") if variant.strip()]
    variant_hparams = [apply_overrides(hparams.copy(), variant) for variant in variants]  # all checked first
    rows = []
    for variant, overridden in zip(variants, variant_hparams):
        for seed in (int(s) for s in FLAGS.seeds.split(",")):
            rollout_rewards, entropy, returns = train_and_evaluate(overridden, model, store, action_space, meanings,
                                                                   FLAGS.iterations, seed)
            rows.append((variant, seed, rollout_rewards, entropy, returns))
    print(f"{FLAGS.run}: {FLAGS.iterations} PPO iterations of {hparams.simulated_num_envs} x "
          f"{hparams.ppo.rollout_length} steps (unless a variant says otherwise) inside its world model, "
          "then the real env")
    for variant, seed, rollout_rewards, entropy, returns in rows:
        cells = ", ".join(f"{label}: {value:.2f}" for label, value in returns.items())
        print(f"{variant} seed {seed}: rollouts with a reward {np.mean(rollout_rewards != 0):.3f}, "
              f"mean reward per rollout {np.mean(rollout_rewards):.3f}; final entropy {entropy:.2f}; real returns "
              f"{cells}")


if __name__ == "__main__":
    define_flags()
    run_command(main)
