import json
import os
import shutil
import subprocess
import sys

import imageio.v2 as imageio
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from conftest import BUCKET, assert_one_line_error, run_module
from rlkit import gcs
from rlkit.rl.publish import PUBLISHED

EVALUATOR = "rlkit.rl.evaluator"


@pytest.fixture
def model_free_run(rlmf_tiny_run):
    return rlmf_tiny_run[0]


def tags(event_dir):
    accumulator = EventAccumulator(event_dir)
    accumulator.Reload()
    return set(accumulator.Tags()["tensors"])


def test_model_free_policy_on_the_real_env_with_videos(model_free_run, tmp_path):
    metrics, videos = tmp_path / "metrics", tmp_path / "videos"
    # No set named: the run's own hparams.json, found next to its policy, says what it was trained on.
    result = run_module(EVALUATOR, "--hparams=eval_batch_size=2",
                        "--eval_step_limit=30", f"--policy_dir={model_free_run}/policy",
                        f"--eval_metrics_dir={metrics}", f"--debug_video_path={videos}", "--num_debug_videos=1")
    assert result.returncode == 0, result.stderr[-3000:]
    with open(metrics / "summary.json") as f:
        results = json.load(f)["results"]["policy"]
    cells = {f"sampling_temp_{t}_max_noops_{n}" for t in (0.0, 1.0) for n in (8, 0)}  # rlmf_tiny's grid
    assert set(results) == cells
    for cell in results.values():
        for kind in ("unclipped", "clipped"):
            assert {f"mean_{kind}", f"median_{kind}", f"std_{kind}"} <= set(cell)
        assert cell["mean_length"] == 30  # no Pong episode ends within 30 agent steps
    assert {f"mean_reward/eval/{c}_{k}" for c in cells for k in ("clipped", "unclipped")} <= tags(str(metrics))

    assert sorted(os.listdir(videos)) == sorted(f"agent_real_policy_{c}_0.mp4" for c in cells)
    reader = imageio.get_reader(str(videos / "agent_real_policy_sampling_temp_0.0_max_noops_0_0.mp4"))
    frames = [frame for frame in reader]
    assert len(frames) == 30
    assert frames[0].shape == (2 * (105 + 14), 2 * 80, 3)  # zoom 2, with the header strip


def test_published_loop_run_evaluates_from_its_gs_path(rlmb_tiny_run, bucket, tmp_path):
    run_dir, _ = rlmb_tiny_run
    published = run_module("rlkit.rl.publish", f"--run_dir={run_dir}", f"--destination=gs://{BUCKET}/runs/pong")
    assert published.returncode == 0, published.stderr[-3000:]
    names = {b.name[len("runs/pong/"):] for b in bucket.client.list_blobs(BUCKET, prefix="runs/pong/")}
    assert names == set(gcs.Uploader(run_dir, f"gs://{BUCKET}/runs/pong").local_files(PUBLISHED))
    assert "policy/epoch_1/saved_model.pb" in names and "hparams.json" in names
    assert not any(name.startswith("data/") for name in names)

    result = run_module(EVALUATOR, "--loop_hparams_set=rlmb_tiny", f"--policy_dir=gs://{BUCKET}/runs/pong/policy",
                        "--all_epochs", "--eval_step_limit=20", f"--eval_metrics_dir=gs://{BUCKET}/evals/pong",
                        f"--debug_video_path=gs://{BUCKET}/evals/pong/videos", "--num_debug_videos=1")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(bucket.blob("evals/pong/summary.json").download_as_bytes())
    assert set(summary["results"]) == {"epoch_0", "epoch_1"}
    assert all(len(cells) == 4 for cells in summary["results"].values())  # temps [0, 1] x noops {8, 0}
    videos = [b.name for b in bucket.client.list_blobs(BUCKET, prefix="evals/pong/videos/")]
    assert len(videos) == 2 * 4 and all(name.endswith(".mp4") for name in videos)

    # The world model too: its reward accuracy from the bucket, on the run's local data.
    result = run_module(EVALUATOR, "--loop_hparams_set=rlmb_tiny", "--mode=model",
                        f"--wm_dir=gs://{BUCKET}/runs/pong/world_model", f"--data_dir={run_dir}/data",
                        "--data_epochs=2", f"--eval_metrics_dir={tmp_path / 'model'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "data epochs [2]" in result.stderr  # it says which data it measured
    with open(tmp_path / "model" / "summary.json") as f:
        record = json.load(f)
    assert record["data_epochs"] == [2]
    assert set(record["results"]["world_model"]) == {f"reward_accuracy{kind}/at_{n}" for kind in ("", "_every_step")
                                                     for n in (4, 12)}


def test_bad_local_inputs_get_one_line(model_free_run, tmp_path):
    metrics = f"--eval_metrics_dir={tmp_path / 'm'}"
    assert_one_line_error(run_module(EVALUATOR, "--hparams_set=rlmf_tiny", f"--policy_dir={tmp_path}", metrics),
                          "no policy in")
    assert_one_line_error(run_module(EVALUATOR, f"--policy_dir={tmp_path}", metrics), "no hparams")
    # A run's policy only works on the frames it was trained on.
    assert_one_line_error(run_module(EVALUATOR, "--hparams=game=breakout", f"--policy_dir={model_free_run}/policy",
                                     metrics), "trained with game='pong'")
    # A policy without its run, evaluated on 84x84 grayscale frames, does not fit.
    shutil.copytree(f"{model_free_run}/policy", tmp_path / "lone_policy")
    assert_one_line_error(run_module(EVALUATOR, "--hparams_set=rlmf_nature", f"--policy_dir={tmp_path / 'lone_policy'}",
                                     metrics), "cannot use the policy")
    assert_one_line_error(run_module(EVALUATOR, "--loop_hparams_set=rlmb_tiny", "--mode=model",
                                     f"--wm_dir={tmp_path}", f"--data_dir={tmp_path}", metrics),
                          "no world model checkpoint")
    assert not (tmp_path / "m").exists()


def test_a_gymnasium_env_policy_evaluates_with_videos_of_the_envs_drawing(tmp_path):
    """A CartPole policy (vector observations, float32) loads with the env's own observation spec,
    and its videos show CartPole's rendered pictures, not the observation vectors."""
    run = str(tmp_path / "cartpole")
    trained = run_module("rlkit.rl.trainer_model_free", "--hparams_set=rlmf_dqn_cartpole",
                         "--hparams=num_env_steps=200,eval_every_steps=100000", f"--output_dir={run}")
    assert trained.returncode == 0, trained.stderr[-3000:]
    metrics, videos = tmp_path / "metrics", tmp_path / "videos"
    # As on a server without a display: CartPole draws with pygame, whose SDL printed an "error:" line of its own.
    headless = {k: v for k, v in os.environ.items()
                if k not in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")}
    result = subprocess.run([sys.executable, "-m", EVALUATOR, "--hparams=eval_batch_size=2,eval_sampling_temps=[0.0]",
                             "--eval_step_limit=20", f"--policy_dir={run}/policy", f"--eval_metrics_dir={metrics}",
                             f"--debug_video_path={videos}", "--num_debug_videos=1"],
                            capture_output=True, text=True, timeout=300, env=headless)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not [line for line in result.stderr.splitlines() if line.startswith("error")], result.stderr[-3000:]
    results = json.load(open(metrics / "summary.json"))["results"]["policy"]
    assert list(results) == ["sampling_temp_0.0_max_noops_0"]  # a gymnasium env takes no no-ops
    lengths = results["sampling_temp_0.0_max_noops_0"]["mean_length"]
    assert 0 < lengths <= 20
    reader = imageio.get_reader(str(videos / "agent_real_policy_sampling_temp_0.0_max_noops_0_0.mp4"))
    frames = [frame for frame in reader]  # (list() would ask the reader's length: infinite)
    assert 0 < len(frames) <= 20
    assert frames[0].shape[0] > 2 * 400 and frames[0].shape[1] == 2 * 600  # CartPole's drawing at zoom 2, headed
