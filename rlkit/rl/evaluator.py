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
from rlkit.data_generators.experience import random_policy
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import frame_shape, pixel_values, spaces_of
from rlkit.errors import UserError, run_command
from rlkit.fileio import atomic_write_text
from rlkit.hparams.env_sets import add_eval_hparams
from rlkit.video import episode_frames, write_mp4

# TensorFlow and the modules that import it (about 5 s) are imported where they are used, so a
# mistake in the flags is reported in well under a second.

MODES = ("agent_real", "agent_simulated", "model")
AGENTS = ("policy", "random")


def write_videos(video_dir, label, recordings, zoom=2):
    """One MP4 per recorded episode: DEBUG_VIDEO_PATH/{label}_{config}_{i}.mp4."""
    paths = []
    for config, episodes in recordings.items():
        for i, (frames, rewards) in enumerate(episodes):
            path = os.path.join(video_dir, f"{label}_{config}_{i}.mp4")
            write_mp4(path, episode_frames(frames, rewards, zoom))
            paths.append(path)
    return paths


def evaluate(hparams, mode, agent, policy_dir, wm_dir, data_dir, all_epochs, num_debug_videos, video_dir,
             seed, data_epochs=None):
    """{label: results} for every policy evaluated (one label for the random agent), plus videos."""
    import tensorflow as tf

    from rlkit.rl.learners.policy_export import find_policies, load_policy
    from rlkit.rl.loops import evaluation
    from rlkit.rl.loops.simulated_env import SimulatedBatchEnv
    from rlkit.rl.loops.world_model_training import load_world_model

    observation_space, action_space, _ = spaces_of(hparams)  # image frames, or a gymnasium env's vectors
    observation_shape = (hparams.frame_stack_size,) + observation_space.shape
    if mode == "model":
        agents = [("world_model", None)]  # the world model's accuracy does not depend on an agent
    elif agent == "random":
        agents = [("random", random_policy(action_space, seed))]
    else:
        agents = [(label, load_policy(path, observation_shape, action_space, tf.as_dtype(observation_space.dtype)))
                  for label, path in find_policies(policy_dir, all_epochs)]
    model = store = None
    if mode in ("agent_simulated", "model"):
        model = load_world_model(hparams.world_model, wm_dir, frame_shape(hparams), int(action_space.n),
                                 pixel_values(hparams))
        store = FrameStore(data_dir)
        if not store.episodes:
            raise UserError(f"no readable episodes in --data_dir={data_dir!r}")
    summary = {}
    for label, act in agents:
        if mode == "agent_real":
            results, recordings = evaluation.evaluate_policy(hparams, act, seed, num_debug_videos)
        elif mode == "agent_simulated":
            simulated_env = SimulatedBatchEnv(model, store, hparams.eval_batch_size, action_space,
                                              reward=hparams.simulated_reward)
            results, recordings = evaluation.evaluate_in_world_model(hparams, act, simulated_env, seed,
                                                                     num_debug_videos)
        else:
            epochs = sorted({e.epoch for e in store.episodes if data_epochs is None or e.epoch in data_epochs})
            # Only data the model was not trained on measures it as SimPLe did: in a loop run,
            # data/epoch_{K+1} for the world model of epoch K.
            logging.info("Reward accuracy of %s on %s, data epochs %s", wm_dir, data_dir, epochs)
            results = evaluation.reward_accuracy(model, store, hparams.reward_accuracy_lengths,
                                                 hparams.reward_accuracy_rollouts, 1.0, seed, epochs=epochs)
            recordings = {}
        summary[label] = results
        if video_dir and recordings:
            paths = write_videos(video_dir, f"{mode}_{label}", recordings)
            logging.info("Wrote %d videos for %s", len(paths), label)
    return summary


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
    needs = {"policy_dir": FLAGS.agent == "policy" and FLAGS.mode != "model",
             "wm_dir": FLAGS.mode != "agent_real", "data_dir": FLAGS.mode != "agent_real",
             "eval_metrics_dir": True}
    for name, needed in needs.items():
        if needed and not getattr(FLAGS, name):
            raise UserError(f"--mode={FLAGS.mode} --agent={FLAGS.agent} needs --{name}")
    if FLAGS.mode != "agent_real" and "world_model" not in hparams:
        raise UserError(f"--mode={FLAGS.mode} needs the hparams of a loop run (trainer_model_based), which "
                        "hold its world model")
    policy_dir, wm_dir, data_dir = (gcs.local_input(path) if path else None
                                    for path in (FLAGS.policy_dir, FLAGS.wm_dir, FLAGS.data_dir))
    try:
        data_epochs = [int(e) for e in FLAGS.data_epochs] if FLAGS.data_epochs else None
    except ValueError:
        raise UserError(f"--data_epochs={','.join(FLAGS.data_epochs)}: give data epoch numbers, e.g. 3 or 2,3") from None
    with cli.locked_output(FLAGS.eval_metrics_dir) as eval_dir, \
            gcs.local_output(FLAGS.debug_video_path or "") as video_dir:
        summary = evaluate(hparams, FLAGS.mode, FLAGS.agent, policy_dir, wm_dir, data_dir, FLAGS.all_epochs,
                           FLAGS.num_debug_videos, video_dir, FLAGS.seed, data_epochs)
        import tensorflow as tf

        from rlkit.rl.loops import evaluation
        from rlkit.summaries import write_summaries

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
