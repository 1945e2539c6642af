"""Publishes a finished run's policy and world model to Google Cloud Storage, so others can
evaluate it or play inside its world model straight from the bucket.

    python -m rlkit.rl.publish --run_dir=DIR --destination=gs://BUCKET/RUNS/pong_1

Uploads hparams.json, operative_config.gin, policy/ and world_model/ (and data/ with
--include_data). Then, for example:

    python -m rlkit.rl.evaluator --loop_hparams_set=... --policy_dir=gs://BUCKET/RUNS/pong_1/policy ...
"""

import os

from absl import flags, logging

from rlkit import cli, gcs
from rlkit.errors import UserError, run_command

PUBLISHED = ["hparams.json", "operative_config.gin", "command.txt", "policy", "world_model"]


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("run_dir", None, "The output dir of a finished rlkit run.")
    flags.DEFINE_string("destination", None, "gs://BUCKET/PREFIX to publish to.")
    flags.DEFINE_bool("include_data", False, "Also upload the real data (data/), which can be large.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if not FLAGS.run_dir or not os.path.exists(os.path.join(FLAGS.run_dir, cli.HPARAMS_FILE)):
        raise UserError(f"--run_dir={FLAGS.run_dir!r} is not an rlkit run (no {cli.HPARAMS_FILE} there)")
    if not gcs.is_remote(FLAGS.destination or ""):
        raise UserError(f"--destination={FLAGS.destination!r} is not a gs://BUCKET/PREFIX path")
    include = PUBLISHED + (["data"] if FLAGS.include_data else [])
    uploaded = gcs.publish(FLAGS.run_dir, FLAGS.destination, include)
    logging.info("Published %d files of %s to %s", len(uploaded), FLAGS.run_dir, FLAGS.destination)


if __name__ == "__main__":
    define_flags()
    run_command(main)
