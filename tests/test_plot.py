import os

import numpy as np
import pytest
import tensorflow as tf

from conftest import BUCKET, assert_one_line_error, run_module
from rlkit.rl.experiments import curves

PLOT = "rlkit.rl.plot"
TAG = "mean_reward/eval/sampling_temp_1.0_max_noops_0_clipped"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def write_run(run_dir, steps, values, subdir="eval_metrics", tag=TAG):
    """Event files as rlkit's evaluations write them: one scalar per step."""
    writer = tf.summary.create_file_writer(os.path.join(run_dir, subdir))
    with writer.as_default():
        for step, value in zip(steps, values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def test_runs_of_one_name_become_one_curve_with_mean_and_band(tmp_path):
    write_run(str(tmp_path / "simple_s0"), [100, 200, 300], [1.0, 2.0, 3.0])
    write_run(str(tmp_path / "simple_s1"), [100, 200, 300], [3.0, 4.0, 8.0])
    write_run(str(tmp_path / "simple_s2"), [100, 250], [2.0, 5.0])  # other steps, stopped earlier
    write_run(str(tmp_path / "ppo_seed0"), [100, 200], [0.0, -1.0])
    runs = curves.expand_runs([str(tmp_path / "simple_s*"), str(tmp_path / "ppo_seed0")])
    drawn, x_label = curves.curves(runs, TAG)
    assert list(drawn) == ["simple", "ppo"] and x_label == "real env steps"
    steps, mean, low, high, count = drawn["simple"]
    assert count == 3
    np.testing.assert_array_equal(steps, [100, 200, 250])  # up to where every run reached
    # At step 200, s2 is interpolated between (100, 2) and (250, 5): 4.
    np.testing.assert_allclose(mean, [(1 + 3 + 2) / 3, (2 + 4 + 4) / 3, (2.5 + 6 + 5) / 3])
    np.testing.assert_allclose(low, [1, 2, 2.5])
    np.testing.assert_allclose(high, [3, 4, 6])
    assert drawn["ppo"][4] == 1


def test_the_command_draws_a_tiny_runs_curves(rlmb_tiny_run, tmp_path):
    run_dir, _ = rlmb_tiny_run
    output = tmp_path / "figures" / "tiny.png"
    result = run_module(PLOT, f"--logdir={run_dir}", f"--tag={TAG}", f"--output={output}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert output.read_bytes().startswith(PNG_SIGNATURE) and output.stat().st_size > 10_000
    name = os.path.basename(run_dir)
    assert f"{name}: 1 run(s)" in result.stderr and "at 600 real env steps" in result.stderr
    # A tag in several of the run's event directories needs --subdir.
    assert_one_line_error(run_module(PLOT, f"--logdir={run_dir}", "--tag=losses/loss", f"--output={output}"),
                          "several event dirs", "world_model/train")
    result = run_module(PLOT, f"--logdir={run_dir}", "--tag=losses/loss", "--subdir=world_model/train",
                        f"--output={output}")
    assert result.returncode == 0 and "world-model training steps" in result.stderr, result.stderr[-3000:]


@pytest.mark.parametrize("args, fragments", [
    (["--logdir={tmp}/nothing*", f"--tag={TAG}", "--output={tmp}/a.png"], ["matches no run directory"]),
    (["--logdir={tmp}/run_s0", "--tag=no/such/tag", "--output={tmp}/a.png"], ["no tag 'no/such/tag'", TAG]),
    (["--logdir={tmp}/run_s0", f"--tag={TAG}", "--output={tmp}/a.jpg"], ["name a .png file"]),
    (["--logdir={tmp}/empty", f"--tag={TAG}", "--output={tmp}/a.png"], ["no TensorBoard event files"]),
    (["--logdir={tmp}/run_s0", f"--tag={TAG}", "--output={tmp}/a.png", "--ylim=1,0"], ["--ylim=1,0", "LOW,HIGH"]),
    (["--logdir={tmp}/run_s0", f"--tag={TAG}", "--output={tmp}/a.png", "--ylim=low,2"], ["--ylim=low,2"]),
])
def test_bad_input_gets_one_line(args, fragments, tmp_path):
    write_run(str(tmp_path / "run_s0"), [1, 2], [0.0, 1.0])
    (tmp_path / "empty").mkdir()
    assert_one_line_error(run_module(PLOT, *[arg.format(tmp=tmp_path) for arg in args]), *fragments)
    assert not (tmp_path / "a.png").exists()


def test_log_dirs_and_the_figure_on_gcs(bucket, tmp_path):
    for seed, final in enumerate([2.0, 4.0]):
        local = tmp_path / f"breakout_s{seed}"
        write_run(str(local), [1000, 2000], [0.0, final])
        (local / "checkpoint.bin").write_bytes(b"large, and not needed for a plot")
        for root, _, names in os.walk(local):
            for name in names:
                path = os.path.join(root, name)
                bucket.blob(f"plots/breakout_s{seed}/{os.path.relpath(path, local)}").upload_from_filename(path)
    result = run_module(PLOT, f"--logdir=gs://{BUCKET}/plots/breakout_s*", f"--tag={TAG}",
                        f"--output=gs://{BUCKET}/figures/breakout.png")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "breakout: 2 run(s), final 3 (min 2, max 4) at 2,000 real env steps" in result.stderr
    assert bucket.blob("figures/breakout.png").download_as_bytes().startswith(PNG_SIGNATURE)
    # Only the event files were fetched.
    cached = [name for _, _, names in os.walk(tmp_path / "cache") for name in names]
    assert not any(name == "checkpoint.bin" for name in cached) and any("tfevents" in name for name in cached)


def test_a_one_point_baseline_is_a_horizontal_line_on_a_log_axis(tmp_path):
    write_run(str(tmp_path / "simple_s0"), [12_800, 25_600, 102_400], [0.5, 1.0, 2.0])
    write_run(str(tmp_path / "ppo_1m_s0"), [20_480, 1_003_520], [0.2, 9.0], subdir="eval")
    write_run(str(tmp_path / "random_s0"), [0], [0.3])  # the evaluator's random agent
    write_run(str(tmp_path / "random_s1"), [0], [0.5])
    runs = curves.expand_runs([str(tmp_path / name) for name in ("simple_s0", "ppo_1m_s0", "random_s*")])
    drawn, _ = curves.curves(runs, TAG)
    lines = curves.draw(drawn, TAG, str(tmp_path / "figure.png"), xscale="log", ylim=(-1, 10))
    assert (tmp_path / "figure.png").read_bytes().startswith(PNG_SIGNATURE)
    assert lines["simple (1 run)"].axes.get_ylim() == (-1, 10)
    baseline = lines["random (2 runs)"]
    assert np.allclose(baseline.get_ydata(), 0.4) and baseline.get_linestyle() == "--"
    assert list(lines["ppo_1m (1 run)"].get_xdata()) == [20_480, 1_003_520]


def test_past_the_tenth_curve_no_two_curves_look_alike(tmp_path):
    names = [f"method{i}_s0" for i in range(13)]
    for i, name in enumerate(names):
        write_run(str(tmp_path / name), [1_000, 2_000], [i, i + 1.0])
    drawn, _ = curves.curves(curves.expand_runs([str(tmp_path / name) for name in names]), TAG)
    lines = curves.draw(drawn, TAG, str(tmp_path / "figure.png")).values()
    assert len({(line.get_color(), line.get_linestyle()) for line in lines}) == 13
