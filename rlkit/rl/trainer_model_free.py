"""Trains a policy with a model-free learner (PPO, A2C, REINFORCE, DQN, NAF) on a real
environment (the loop itself: `rlkit.rl.loops.model_free`).

    python -m rlkit.rl.trainer_model_free --hparams_set=rlmf_base --hparams=game=pong --output_dir=DIR

OUTPUT_DIR gets hparams.json, checkpoints/, TensorBoard events in train/ and eval/ and the policy
in policy/ (the best evaluated one in policy/best), and eval/final.json once it is done; rerunning
the same command after a kill resumes from the last checkpoint, and after the end does nothing.
"""

import functools

from absl import flags

from rlkit import cli
from rlkit.errors import run_command
from rlkit.rl.loops import finished, model_free
from rlkit.rl.loops.model_free import check_names, train


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("rlmf_base", "Run directory: checkpoints, TensorBoard events, exported policy.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    done = functools.partial(finished, among=(model_free,))  # a finished run's rerun loads nothing
    with cli.start_run(FLAGS, check=check_names, finished=done) as (hparams, output_dir):
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    run_command(main)
