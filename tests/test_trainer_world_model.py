import glob
import os

import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from conftest import SMALL_PONG_SHOWN, assert_one_line_error

TRAINER = "rlkit.rl.trainer_world_model"
TINY = ["--hparams_set=next_frame_basic_deterministic_tiny"]


def test_trains_on_collected_pong_with_dreams_and_resumes(cli, tmp_path, rlmb_tiny_run):
    data_dir = os.path.join(rlmb_tiny_run[0], "data")  # real Pong collected by a loop run
    out = str(tmp_path / "wm")
    result = cli(TRAINER, *TINY, f"--data_dir={data_dir}", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "40/40 steps (100%)" in result.stderr and "World model at step 40 on its training data" in result.stderr
    assert sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "ckpt-*.index"))) == \
        ["ckpt-20.index", "ckpt-40.index"]

    train = EventAccumulator(os.path.join(out, "train"))
    train.Reload()
    assert {"losses/pixel_loss", "losses/reward_loss", "charts/pixel_accuracy", "charts/reward_accuracy",
            "losses/loss", "charts/steps_per_second"} <= set(train.Tags()["tensors"])
    assert [e.step for e in train.Tensors("losses/pixel_loss")] == [10, 20, 30, 40]
    dreams = EventAccumulator(os.path.join(out, "dream"), size_guidance={"tensors": 0})
    dreams.Reload()
    events = dreams.Tensors("images/dream_real_difference")
    assert [e.step for e in events] == [20, 40]
    width, height, png = tf.make_ndarray(events[-1].tensor_proto)
    image = tf.io.decode_png(png).numpy()
    frame_height, frame_width, _ = SMALL_PONG_SHOWN  # the loop run's frames, as the dream image shows them
    assert image.shape == (4 * frame_height, 3 * frame_width, 3)  # dream | real | difference, 4 steps
    assert (int(width), int(height)) == (3 * frame_width, 4 * frame_height)

    again = cli(TRAINER, *TINY, f"--data_dir={data_dir}", f"--output_dir={out}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Restored" in again.stderr and "at global step 40" in again.stderr
    assert "10/40 steps" not in again.stderr  # nothing was trained twice

    # Object frames are for on/off frames (MinAtar's), not Pong's 256 values.
    assert_one_line_error(cli(TRAINER, *TINY, "--hparams=frame_decoding=objects", f"--data_dir={data_dir}",
                              f"--output_dir={tmp_path / 'objects'}"), "frame_decoding=objects is for on/off frames")


def test_bad_input_gets_one_line(cli, tmp_path):
    out = str(tmp_path / "wm")
    assert_one_line_error(cli(TRAINER, *TINY, f"--data_dir={tmp_path / 'nothing'}", f"--output_dir={out}"),
                          "no readable shards in --data_dir")
    assert_one_line_error(cli(TRAINER, "--hparams_set=next_frame_basic_determinstic", f"--output_dir={out}"),
                          "did you mean 'next_frame_basic_deterministic'")
    assert_one_line_error(cli(TRAINER, *TINY, "--hparams=model=next_frame_magic", f"--data_dir={tmp_path}",
                              f"--output_dir={out}"), "unknown model 'next_frame_magic'")
    assert not os.path.exists(out)
