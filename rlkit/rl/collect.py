"""Collects real experience with a uniformly random policy into OUTPUT_DIR/data.

    python -m rlkit.rl.collect --hparams_set=collect_random_tiny \
        --hparams=game=pong --output_dir=/tmp/rlkit_random_pong

Rerunning the same command after it was killed continues where the last whole shard ended.
"""

import os

from absl import flags, logging

from rlkit import cli
from rlkit.data_generators.experience import collect_experience
from rlkit.data_generators.make_env import make_batch_env
from rlkit.data_generators.storage import stored_steps
from rlkit.errors import run_command


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("collect_random", "Run directory; the shards go to OUTPUT_DIR/data.")
    flags.DEFINE_integer("epoch", 0, "Epoch number the shards are stored under.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    with cli.start_run(FLAGS) as (hparams, output_dir):
        collect(hparams, output_dir, FLAGS.epoch, FLAGS.seed)


def collect(hparams, output_dir, epoch, seed):
    """Stores hparams.num_agent_steps random steps in OUTPUT_DIR/data/epoch_{epoch}, continuing a killed run."""
    data_dir = os.path.join(output_dir, "data")
    done_steps = stored_steps(data_dir, epoch)
    if done_steps >= hparams.num_agent_steps:
        logging.info("All %d agent steps are already stored in %s", hparams.num_agent_steps, data_dir)
        return
    with make_batch_env(hparams, hparams.num_envs) as env:
        cli.write_operative_config(output_dir)
        collect_experience(env, data_dir, epoch, hparams.num_agent_steps, hparams.shard_steps, seed)
    logging.info("Stored %d agent steps of %s in %s", max(done_steps, hparams.num_agent_steps),
                 hparams.game, data_dir)


if __name__ == "__main__":
    define_flags()
    run_command(main)
