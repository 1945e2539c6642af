"""Play inside a world model with the keyboard, next to the real game, to judge the model by eye.

    python -m rlkit.rl.player --wm_dir=RUN/world_model --zoom=3 --fps=5

The game and the world model's settings come from the run's hparams.json (next to --wm_dir);
--hparams_set names a registered set for a world model saved without one.

The window shows three columns: the world model's frame, the real game's frame, and their
difference (|model - real| less 10, so small differences vanish), each under a header with
the cumulative reward, the last reward and the frame number; a status line shows the mode and
the keys.

Keys: W/A/S/D = UP/LEFT/DOWN/RIGHT, space = FIRE (combinations such as UP+FIRE where the game
has them; Pong's paddle moves with RIGHT and LEFT, i.e. D and A); R resets both; X restarts
the world model from the last 4 real frames; C toggles between waiting for a key and real time;
N steps a no-op while waiting; P hands control to the policy in --policy_dir and back; Esc or
Q quits.

Modes: `sim_and_real` (default), `simulated` (the world model alone, started from stored real
data: --episodes_data_dir, --epoch), `real` (the real game alone). --video_dir records the
session as MP4; --dry_run plays a few scripted steps without a display.
"""
import os

from absl import flags, logging

from rlkit import cli, gcs
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import (action_space_of, check_image_game, check_stored_data, frame_shape,
                                            pixel_values)
from rlkit.display import require_display
from rlkit.errors import UserError, run_command
from rlkit.rl.experiments.play import MODES, Player, dry_run, loading_canvas, open_player_window, play
from rlkit.rl.loops import trains_world_model
from rlkit.video import write_mp4


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    cli.define_flags("rlmb_base_stochastic_discrete")
    flags.DEFINE_enum("mode", "sim_and_real", MODES, "What to show.")
    flags.DEFINE_string("wm_dir", None, "world_model/ of a run (local or gs://).")
    flags.DEFINE_string("policy_dir", None, "policy/ of a run, for P (local or gs://).")
    flags.DEFINE_string("episodes_data_dir", None, "Real data (a run's data/) that simulated mode starts from.")
    flags.DEFINE_integer("epoch", None, "Data epoch to start from in simulated mode (default: all).")
    flags.DEFINE_integer("zoom", 3, "Pixels per frame pixel.")
    flags.DEFINE_integer("fps", 5, "Frames per second in real-time mode (and the video's rate).")
    flags.DEFINE_string("video_dir", None, "Record the session as an MP4 here.")
    flags.DEFINE_bool("dry_run", False, "Play a few scripted steps without a display, then exit.")


FLAGS = flags.FLAGS


def main(argv):
    del argv
    if not FLAGS.dry_run:
        require_display("--dry_run plays a few steps without one (--video_dir records them)")
    hparams = cli.load_hparams(FLAGS, run_dirs=[FLAGS.wm_dir, FLAGS.policy_dir])
    model = store = policy = episodes_dir = None
    # What the flags and the set say is checked first; then the window opens, saying what loads
    # (TensorFlow, the world model and the policy take seconds, more on a loaded machine).
    if FLAGS.mode != "real":
        if not FLAGS.wm_dir:
            raise UserError(f"--mode={FLAGS.mode} needs --wm_dir (the world_model/ dir of a run)")
        if not trains_world_model(hparams):
            raise UserError(f"--mode={FLAGS.mode} needs the hparams of a loop run (trainer_model_based), which "
                            "hold its world model")
        check_image_game(hparams.game, "world models")
    if FLAGS.mode == "simulated":
        if not FLAGS.episodes_data_dir:
            raise UserError("--mode=simulated needs --episodes_data_dir (the data/ dir of a run)")
        episodes_dir = gcs.local_input(FLAGS.episodes_data_dir)
        check_stored_data(hparams, episodes_dir, "--episodes_data_dir",
                          remedy=f"give the data/ dir of a {hparams.game} run with the world model's frames")
    loading = " and ".join(what for what, wanted in (("the world model", FLAGS.mode != "real"),
                                                      ("the policy", bool(FLAGS.policy_dir))) if wanted) or "the game"
    logging.info("Loading %s ...", loading)
    screen = None
    if not FLAGS.dry_run:
        screen = open_player_window(loading_canvas(FLAGS.mode, frame_shape(hparams), FLAGS.zoom, loading), hparams.game)
    from rlkit.rl.learners.policy_export import find_policies, load_policy  # TensorFlow loads here
    from rlkit.rl.loops.world_model_training import load_world_model
    if FLAGS.mode != "real":
        action_space, _ = action_space_of(hparams)
        model = load_world_model(hparams.world_model, gcs.local_input(FLAGS.wm_dir), frame_shape(hparams),
                                 int(action_space.n), pixel_values(hparams))
    if FLAGS.mode == "simulated":
        epochs = None if FLAGS.epoch is None else [FLAGS.epoch]
        store = FrameStore(episodes_dir, epochs)
    if FLAGS.policy_dir:
        path = find_policies(gcs.local_input(FLAGS.policy_dir), all_epochs=False)[-1][1]
        policy = load_policy(path, (hparams.frame_stack_size,) + frame_shape(hparams), action_space_of(hparams)[0])
    player = Player(FLAGS.mode, hparams, model, store, policy, FLAGS.seed, FLAGS.zoom)
    if FLAGS.dry_run:
        dry_run(player)
        logging.info("Dry run: %d steps; the last frame numbers: %s", len(player.recorded),
                     ", ".join(c.header() for c in (player.simulated, player.real) if c is not None))
    else:
        play(player, FLAGS.fps, screen=screen)
    if FLAGS.video_dir and player.recorded:
        with gcs.local_output(FLAGS.video_dir) as video_dir:
            path = os.path.join(video_dir, f"player_{hparams.game.replace('/', '_')}_{FLAGS.mode}.mp4")
            write_mp4(path, player.recorded, fps=FLAGS.fps)
        logging.info("Wrote %s (%d frames)", path, len(player.recorded))


if __name__ == "__main__":
    define_flags()
    run_command(main)
