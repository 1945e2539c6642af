"""Learning curves from the TensorBoard event files of rlkit runs, drawn as a PNG.

    python -m rlkit.rl.plot --logdir='RUNS/breakout_simple_s*,RUNS/breakout_ppo_s*' \
        --tag=mean_reward/eval/sampling_temp_1.0_max_noops_0_clipped --output=breakout.png

Each comma-separated --logdir item is a run's output directory or a shell pattern of them,
local or gs://. Runs whose names differ only in a seed suffix (`_s0`, `_seed1`, `-2`) are one
curve: the mean over the runs, with a band from their minimum to their maximum. The x axis is the
event step, which rlkit's evaluation events count in real env steps (the SimPLe loop's
eval_metrics/, the model-free trainers' eval/); --xscale=log shows 100K and 1M runs together,
and --ylim=LOW,HIGH fixes the y axis (a game's whole score range, say).
A run with one point (the evaluator's random baseline, say) is drawn as a dashed horizontal line.
The tag is looked up in every event directory of a run; where several hold it, --subdir picks
one (`world_model/train`, say).
"""
import os

from absl import flags, logging

from rlkit import gcs
from rlkit.errors import UserError, run_command
from rlkit.rl.experiments.curves import curves, draw, expand_runs


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_list("logdir", None, "Run directories or shell patterns of them, local or gs://.")
    flags.DEFINE_string("tag", None, "The scalar to draw, e.g. mean_reward/eval/sampling_temp_1.0_max_noops_0_clipped.")
    flags.DEFINE_string("subdir", None, "The event directory of each run that holds the tag, where several do.")
    flags.DEFINE_string("output", None, "The PNG to write (local or gs://).")
    flags.DEFINE_string("title", None, "The figure's title (default: the tag).")
    flags.DEFINE_enum("xscale", "linear", ["linear", "log"], "The x axis's scale.")
    flags.DEFINE_list("ylim", None, "LOW,HIGH: the y axis's range (default: the curves'), e.g. -21,21 for Pong.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if not FLAGS.logdir or not FLAGS.tag or not FLAGS.output:
        raise UserError("usage: python -m rlkit.rl.plot --logdir=RUN[,RUN...] --tag=TAG --output=FILE.png")
    if not FLAGS.output.endswith(".png"):
        raise UserError(f"--output={FLAGS.output!r}: name a .png file")
    ylim = None
    if FLAGS.ylim:
        try:
            ylim = [float(value) for value in FLAGS.ylim]
        except ValueError:
            ylim = None
        if ylim is None or len(ylim) != 2 or not ylim[0] < ylim[1]:
            raise UserError(f"--ylim={','.join(FLAGS.ylim)}: give the y axis's LOW,HIGH, e.g. --ylim=-21,21")
    drawn, x_label = curves(expand_runs(FLAGS.logdir), FLAGS.tag, FLAGS.subdir)
    for name, (steps, mean, low, high, count) in drawn.items():
        logging.info("%s: %d run(s), final %.4g (min %.4g, max %.4g) at %s %s", name, count, mean[-1], low[-1],
                     high[-1], f"{steps[-1]:,}", x_label)
    output_dir, file_name = os.path.split(FLAGS.output)
    with gcs.local_output(output_dir or ".") as local_dir:
        draw(drawn, FLAGS.tag, os.path.join(local_dir, file_name), x_label, FLAGS.title, FLAGS.xscale, ylim)
    logging.info("Wrote %s", FLAGS.output)


if __name__ == "__main__":
    define_flags()
    run_command(main)
