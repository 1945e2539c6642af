"""The SimPLe loop as a command: real experience -> world model -> a learner inside the world
model, repeated (the loop itself: `rlkit.rl.loops.simple`).

    python -m rlkit.rl.trainer_model_based --hparams_set=rlmb_base_stochastic_discrete \
        --hparams=game=pong --output_dir=DIR

(`--loop_hparams_set`/`--loop_hparams`, SimPLe's flag names, are accepted too.) OUTPUT_DIR holds
data/, world_model/, policy/ and eval_metrics/; rerunning the same command after a kill
continues at the stage where the run stopped.
"""

from absl import flags

from rlkit import cli
from rlkit.errors import run_command
from rlkit.rl.loops.simple import check_names, train


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("rlmb_base_stochastic_discrete", "Run directory: data, world_model, policy, eval_metrics.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    with cli.start_run(FLAGS, check=check_names) as (hparams, output_dir):
        train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    run_command(main)
