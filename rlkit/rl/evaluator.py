"""Evaluates a policy (or a random agent) on the real env or inside a world model, or a world
model's reward predictions, from local or gs:// paths.

    python -m rlkit.rl.evaluator --policy_dir=gs://BUCKET/RUN/policy --eval_metrics_dir=DIR \
        --debug_video_path=DIR --num_debug_videos=4 [--hparams=eval_batch_size=4]

The run's own hparams.json (found next to --policy_dir or --wm_dir) says what it was trained
on; --hparams_set names a registered set instead for a run that has none.

Modes: `agent_real` (the real env, over eval_sampling_temps x {eval_max_num_noops, 0}),
`agent_simulated` (inside the world model in --wm_dir, starting from real frames in
--data_dir), `model` (the world model's reward accuracy on --data_dir). `--policy_dir` is a
SavedModel dir (a model-free run's policy/) or a loop run's policy/ with epoch_K exports: the
newest one, or every one with --all_epochs. Results go to EVAL_METRICS_DIR/summary.json and
TensorBoard; --num_debug_videos episodes per configuration go to DEBUG_VIDEO_PATH as MP4.
"""

import json
import os

from absl import flags, logging

from rlkit import cli, gcs
from rlkit.data_generators.make_env import check_stored_data
from rlkit.errors import UserError, run_command
from rlkit.fileio import atomic_write_text
from rlkit.hparams.env_sets import add_eval_hparams
from rlkit.hparams.hparam import split_overrides
from rlkit.rl.loops import trains_world_model

# TensorFlow and the modules that import it (about 5 s) are imported where they are used, so a
# mistake in the flags is reported in well under a second.

MODES = ("agent_real", "agent_simulated", "model")
AGENTS = ("policy", "random")


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags(None)
    flags.DEFINE_enum("mode", "agent_real", MODES, "What to evaluate.")
    flags.DEFINE_enum("agent", "policy", AGENTS, "The trained policy (--policy_dir) or a random baseline.")
    flags.DEFINE_string("policy_dir", None, "policy/ of a run (local or gs://).")
    flags.DEFINE_bool("all_epochs", False, "Evaluate every policy/epoch_K of a loop run, not just the newest.")
    flags.DEFINE_string("wm_dir", None, "world_model/ of a run, for agent_simulated and model modes.")
    flags.DEFINE_string("data_dir", None, "Real data (a run's data/): starting frames and reward targets.")
    flags.DEFINE_list("data_epochs", None, "--mode=model: only these data epochs of --data_dir (e.g. the one "
                      "the world model has not been trained on); default all.")
    flags.DEFINE_string("eval_metrics_dir", None, "Where summary.json and TensorBoard events go.")
    flags.DEFINE_string("debug_video_path", None, "Where MP4s of evaluated episodes go.")
    flags.DEFINE_integer("num_debug_videos", 0, "Episodes recorded per configuration.")
    flags.DEFINE_integer("eval_step_limit", None, "Agent steps per episode (default: the hparams').")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    # Sets without evaluation settings (and runs saved before they had them) get SimPLe's.
    hparams = cli.load_hparams(FLAGS, run_dirs=[FLAGS.policy_dir, FLAGS.wm_dir], add_defaults=add_eval_hparams)
    if FLAGS.eval_step_limit is not None:
        hparams.eval_step_limit = FLAGS.eval_step_limit
    # The evaluator plays a run's final evaluation: final_eval_batch_size episodes per cell where the
    # set has one (MinAtar's 128). --hparams=eval_batch_size=N asks for N, so N it is.
    overridden = {name for name, _ in split_overrides(FLAGS.hparams or "")}
    if "eval_batch_size" in overridden and "final_eval_batch_size" not in overridden and "final_eval_batch_size" in hparams:
        hparams.final_eval_batch_size = hparams.eval_batch_size
    needs = {"policy_dir": FLAGS.agent == "policy" and FLAGS.mode != "model",
             "wm_dir": FLAGS.mode != "agent_real", "data_dir": FLAGS.mode != "agent_real",
             "eval_metrics_dir": True}
    for name, needed in needs.items():
        if needed and not getattr(FLAGS, name):
            raise UserError(f"--mode={FLAGS.mode} --agent={FLAGS.agent} needs --{name}")
    if FLAGS.mode != "agent_real" and not trains_world_model(hparams):
        raise UserError(f"--mode={FLAGS.mode} needs the hparams of a loop run (trainer_model_based), which "
                        "hold its world model")
    policy_dir, wm_dir, data_dir = (gcs.local_input(path) if path else None
                                    for path in (FLAGS.policy_dir, FLAGS.wm_dir, FLAGS.data_dir))
    if data_dir:  # a world model of the run's frames steps from these: they must be its game's
        check_stored_data(hparams, data_dir, "--data_dir", remedy=f"give the data/ dir of a {hparams.game} run "
                          f"with the world model's frames")
    data_epochs = cli.data_epochs(FLAGS.data_epochs)
    # TensorFlow loads (about 5 s) once the flags are checked.
    import tensorflow as tf

    from rlkit.rl.loops import evaluation
    from rlkit.summaries import write_summaries

    with cli.locked_output(FLAGS.eval_metrics_dir) as eval_dir, \
            gcs.local_output(FLAGS.debug_video_path or "") as video_dir:
        summary = evaluation.evaluate(hparams, FLAGS.mode, FLAGS.agent, policy_dir, wm_dir, data_dir,
                                      FLAGS.all_epochs, FLAGS.num_debug_videos, video_dir, FLAGS.seed, data_epochs)

        os.makedirs(eval_dir, exist_ok=True)
        writer = tf.summary.create_file_writer(eval_dir)
        for label, results in summary.items():
            step = int(label.split("_")[1]) if label.startswith("epoch_") else 0
            scalars = results if FLAGS.mode == "model" else evaluation.policy_scalars(results)
            write_summaries(writer, step, scalars)
        record = dict(mode=FLAGS.mode, agent=FLAGS.agent, policy_dir=FLAGS.policy_dir, wm_dir=FLAGS.wm_dir,
                      data_dir=FLAGS.data_dir, data_epochs=data_epochs, hparams=hparams.values(), results=summary)
        atomic_write_text(os.path.join(eval_dir, "summary.json"), json.dumps(record, indent=2) + "\n")
    logging.info("Wrote %s", os.path.join(FLAGS.eval_metrics_dir, "summary.json"))


if __name__ == "__main__":
    define_flags()
    run_command(main)
