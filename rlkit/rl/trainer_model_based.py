"""The model-based loops as a command: the SimPLe loop (real experience -> world model -> a
learner inside the world model, repeated: `rlkit.rl.loops.simple`) for SimPLe's sets, and the
Dreamer loop (env steps interleaved with gradient steps of a world model and an actor-critic
in imagination: `rlkit.rl.loops.dreamer`) for a set whose `loop` is "dreamer".

    python -m rlkit.rl.trainer_model_based --hparams_set=rlmb_base_stochastic_discrete \
        --hparams=game=pong --output_dir=DIR
    python -m rlkit.rl.trainer_model_based --hparams_set=dreamer_v2_minatar \
        --hparams=game=minatar/breakout --output_dir=DIR [--offline_data_dir=RUN/data]

(`--loop_hparams_set`/`--loop_hparams`, SimPLe's flag names, are accepted too.) OUTPUT_DIR holds
data/, world_model/, policy/ and eval_metrics/; rerunning the same command after a kill
continues where the run stopped.
"""

import functools

from absl import flags

from rlkit import cli
from rlkit.errors import UserError, run_command
from rlkit.hparams import get_hparams
from rlkit.rl.loops import dreamer, finished, loop_for, model_free, simple
from rlkit.rl.loops.threads import one_thread_per_op


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("rlmb_base_stochastic_discrete", "Run directory: data, world_model, policy, eval_metrics.")
    flags.DEFINE_string("offline_data_dir", None, "Dreamer sets: learn from this stored data alone (another run's "
                        "data/ or collect's output), then evaluate on the real env.")


FLAGS = flags.FLAGS


def loop_of(hparams):
    """The loop a set runs: Dreamer's where it says so, else SimPLe's (whose check refuses any
    other set in one line)."""
    return dreamer if loop_for(hparams) is dreamer else simple


def check_names(hparams):
    if FLAGS.offline_data_dir and loop_of(hparams) is not dreamer:
        raise UserError("--offline_data_dir trains a Dreamer set (dreamer_v2_minatar, dreamer_v2_atari) from stored "
                        "data; the SimPLe loop collects its own")
    loop_of(hparams).check_names(hparams)


def main(argv):
    del argv
    one_thread_per_op()  # before TensorFlow's runtime starts, which reads it once
    if FLAGS.offline_data_dir:  # recorded in the run's hparams, so a rerun resumes the same offline run
        if FLAGS["hparams_set"].present and get_hparams(FLAGS.hparams_set).get("loop") != "dreamer":
            raise UserError("--offline_data_dir trains a Dreamer set (dreamer_v2_minatar, dreamer_v2_atari) from "
                            "stored data; the SimPLe loop collects its own")
        FLAGS.hparams = ",".join(filter(None, [FLAGS.hparams, f"offline_data_dir={FLAGS.offline_data_dir}"]))
    done = functools.partial(finished, among=(simple, dreamer))  # a finished run's rerun loads nothing
    with cli.start_run(FLAGS, check=check_names, finished=done) as (hparams, output_dir):
        loop_of(hparams).train(hparams, output_dir, FLAGS.seed)


if __name__ == "__main__":
    define_flags()
    run_command(main)
