"""Collects real experience with a uniformly random policy into OUTPUT_DIR/data.

    python -m rlkit.data_generators.collect --hparams_set=collect_random_tiny \
        --hparams=game=pong --output_dir=/tmp/rlkit_random_pong

Rerunning the same command after it was killed continues where the last whole shard ended.
"""

import os

import numpy as np
from absl import flags, logging

from rlkit import cli
from rlkit.data_generators import storage
from rlkit.data_generators.make_env import check_game, make_batch_env
from rlkit.progress import Progress

cli.define_hparams_flags("collect_random")
cli.define_gin_flags()
flags.DEFINE_string("output_dir", None, "Run directory; the shards go to OUTPUT_DIR/data.")
flags.DEFINE_integer("epoch", 0, "Epoch number the shards are stored under.")
flags.DEFINE_integer("seed", 0, "Seed of the envs and of the random policy.")
FLAGS = flags.FLAGS


def stored_steps(data_dir, epoch):
    """Agent steps (over all envs) already stored for `epoch`."""
    return sum(storage.shard_num_steps(path) for path in storage.list_shards(data_dir, [epoch]))


def collect_random(env, writer, num_agent_steps, shard_steps, seed, done_steps=0):
    """Steps `env` with random actions until `num_agent_steps` are stored; returns mean episode return."""
    rng = np.random.default_rng(seed)
    progress = Progress(num_agent_steps, done_steps)
    observation = env.reset(seed=seed)
    returns = []
    while done_steps < num_agent_steps:
        actions = rng.integers(env.action_space.n, size=env.num_envs)
        step = env.step(actions)
        writer.add(observation, actions, step)
        observation = step.observation
        returns.extend(step.episode_return[step.done].tolist())
        done_steps += env.num_envs
        if writer.num_buffered_steps == shard_steps or done_steps >= num_agent_steps:
            writer.write_shard()
            mean_return = float(np.mean(returns)) if returns else float("nan")
            logging.info(progress.line(done_steps, episodes=len(returns), mean_return=mean_return))
    return float(np.mean(returns)) if returns else float("nan")


def main(argv):
    del argv
    cli.parse_gin(FLAGS.gin_files, FLAGS.gin_bindings)
    hparams = cli.load_hparams(FLAGS.hparams_set, FLAGS.hparams)
    check_game(hparams.game)  # before anything is written, so a typo leaves no run dir behind
    cli.prepare_output_dir(FLAGS.output_dir, hparams)
    data_dir = os.path.join(FLAGS.output_dir, "data")
    done_steps = stored_steps(data_dir, FLAGS.epoch)
    if done_steps >= hparams.num_agent_steps:
        logging.info("All %d agent steps are already stored in %s", hparams.num_agent_steps, data_dir)
        return
    with make_batch_env(hparams, hparams.num_envs) as env:
        cli.write_operative_config(FLAGS.output_dir)
        writer = storage.RolloutWriter(data_dir, FLAGS.epoch, env.num_envs)
        # A resumed run continues with fresh episodes; its seed moves on so they are new ones.
        seed = FLAGS.seed + done_steps
        collect_random(env, writer, hparams.num_agent_steps, hparams.shard_steps, seed, done_steps)
    logging.info("Stored %d agent steps of %s in %s", max(done_steps, hparams.num_agent_steps),
                 hparams.game, data_dir)


if __name__ == "__main__":
    cli.run(main)
