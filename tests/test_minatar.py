"""MinAtar games through rlkit: the batch interface, two-valued world models, colour frames, and
the SimPLe loop end to end on `rlmb_minatar_tiny` with what a user then does with its run."""

import json
import os
import re
import shutil
import subprocess
import sys

import cv2
import gymnasium as gym
import imageio.v2 as imageio
import numpy as np
import pytest
import tensorflow as tf

from conftest import assert_one_line_error, run_module
from rlkit.data_generators import storage
from rlkit.data_generators.frame_store import FrameStore
from rlkit.data_generators.make_env import check_game, frame_shape, make_batch_env, pixel_values
from rlkit.errors import UserError
from rlkit.hparams import create_hparams
from rlkit.models.world_model import imagine, likeliest_frames, pixel_classes
from rlkit.rl.loops.simulated_env import SimulatedBatchEnv
from rlkit.rl.loops.world_model_training import load_world_model
from rlkit.video import CHANNEL_COLOURS, display_frame, to_rgb

LOOP = "rlkit.rl.trainer_model_based"


def random_steps(game, num_envs=4, steps=300, seed=0, **overrides):
    hparams = create_hparams("rlmf_minatar", ",".join([f"game={game}"] + [f"{k}={v}" for k, v in overrides.items()]))
    rng = np.random.default_rng(seed)
    with make_batch_env(hparams, num_envs) as env:
        observations, steps_taken = [env.reset(seed=seed)], []
        for _ in range(steps):
            step = env.step(rng.integers(env.action_space.n, size=num_envs))
            observations.append(step.observation)
            steps_taken.append(step)
        return env, np.stack(observations), steps_taken


def test_minatar_games_run_through_the_batch_interface():
    env, observations, steps = random_steps("minatar/breakout")
    assert env.observation_shape == (10, 10, 4) and env.action_space.n == 3
    assert env.action_meanings == ["NOOP", "LEFT", "RIGHT"]
    assert observations.dtype == np.uint8 and set(np.unique(observations)) == {0, 255}
    done = np.stack([s.done for s in steps])
    assert done.any()  # random Breakout loses the ball within 300 steps
    returns = np.concatenate([s.episode_return[s.done] for s in steps])
    lengths = np.concatenate([s.episode_length[s.done] for s in steps])
    assert returns.min() >= 0 and returns.sum() > 0 and lengths.min() > 0
    # A done env starts its next game in the same step: the bricks are back.
    t, i = np.argwhere(done)[0]
    assert observations[t + 1, i, 1:4, :, 3].all()

    # Seeded: the same seed gives the same games, another seed others.
    np.testing.assert_array_equal(observations, random_steps("minatar/breakout")[1])
    assert not np.array_equal(observations, random_steps("minatar/breakout", seed=1)[1])


@pytest.mark.parametrize("name, shape, actions", [
    ("MinAtar/Breakout-v1", (10, 10, 4), 3),  # the gymnasium id names the same game
    ("MinAtar/Breakout-v0", (10, 10, 4), 6),  # v0: MinAtar's full action set
    ("minatar/seaquest", (10, 10, 10), 6),
    ("minatar/freeway", (10, 10, 7), 3),
])
def test_every_name_of_a_minatar_game_works(name, shape, actions):
    env, observations, _ = random_steps(name, steps=5)
    assert observations.shape[2:] == shape == env.observation_shape and env.action_space.n == actions
    hparams = create_hparams("rlmb_minatar", f"game={name}")
    assert frame_shape(hparams) == shape and pixel_values(hparams) == 2


def test_the_episode_cap_truncates_and_counts_steps():
    _, _, steps = random_steps("minatar/freeway", num_envs=2, steps=30, max_episode_frames=25)
    truncated = np.stack([s.truncated for s in steps])
    assert truncated[24].all() and not truncated[:24].any() and not np.stack([s.terminated for s in steps]).any()
    assert steps[24].episode_length.tolist() == [25, 25]


def test_a_misspelt_minatar_game_names_the_right_one():
    with pytest.raises(UserError, match="unknown game 'minatar/breakot'.*minatar/breakout"):
        check_game("minatar/breakot")


def test_world_model_classes_follow_the_frame_values():
    frames = tf.constant([0, 1, 128, 254, 255], tf.uint8)
    np.testing.assert_array_equal(pixel_classes(frames, 256), [0, 1, 128, 254, 255])
    np.testing.assert_array_equal(pixel_classes(tf.constant([0, 255], tf.uint8), 2), [0, 1])
    two_class_logits = tf.constant([[2.0, -1.0], [-1.0, 3.0]])
    np.testing.assert_array_equal(likeliest_frames(two_class_logits), [0, 255])
    np.testing.assert_array_equal(likeliest_frames(tf.one_hot([7, 200], 256)), [7, 200])


def test_channels_are_drawn_in_colour():
    frame = np.zeros((10, 10, 4), np.uint8)
    frame[0, 0, 0] = frame[5, 5, 3] = 255
    frame[2, 2, [1, 2]] = 255  # two objects on one cell: the higher channel is drawn
    rgb = to_rgb(frame)
    assert rgb.shape == (10, 10, 3)
    np.testing.assert_array_equal(rgb[0, 0], CHANNEL_COLOURS[0])
    np.testing.assert_array_equal(rgb[5, 5], CHANNEL_COLOURS[3])
    np.testing.assert_array_equal(rgb[2, 2], CHANNEL_COLOURS[2])
    assert rgb.sum() == CHANNEL_COLOURS[[0, 2, 3]].sum()  # black elsewhere
    assert display_frame(frame).shape == (80, 80, 3)  # enlarged to be seen
    gray = np.full((105, 80, 1), 7, np.uint8)
    assert display_frame(gray).shape == (105, 80, 3) and (display_frame(gray) == 7).all()


@pytest.fixture(scope="module")
def minatar_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("minatar") / "run")
    # With the episode-end head, which MinAtar's games need and SimPLe's model lacks, and object
    # frames and changed-pixel weights (not SimPLe's) in its training, scheduled sampling and env;
    # the likeliest frames and the plain pixel loss run on Pong.
    result = run_module(LOOP, "--loop_hparams_set=rlmb_minatar_tiny",
                        "--loop_hparams=world_model.predict_episode_ends=True,world_model.frame_decoding=objects,"
                        "world_model.changed_pixel_weight=10", f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_rlmb_minatar_tiny_end_to_end(minatar_run):
    hparams = create_hparams("rlmb_minatar_tiny", "world_model.predict_episode_ends=True")
    shards = storage.list_shards(os.path.join(minatar_run, "data"))
    assert len(shards) == 6 and all(storage.load_shard(p)["frames"].shape[2:] == (10, 10, 4) for p in shards)
    # The world model predicts each channel as one of 2 classes, and its frames are 0 or 255.
    model = load_world_model(hparams.world_model, os.path.join(minatar_run, "world_model"), (10, 10, 4), 3, 2)
    assert model.frame_model.pixel_head.kernel.shape[-1] == 4 * 2
    history = storage.load_shard(shards[-1])["frames"][:1, :4]
    frames, _, _, _, _ = imagine(model, history, np.zeros((1, 3), np.int32))
    assert frames.shape == (1, 3, 10, 10, 4) and set(np.unique(frames)) <= {0, 255}
    with open(os.path.join(minatar_run, "eval_metrics", f"epoch_{hparams.epochs - 1}.json")) as f:
        summary = json.load(f)
    assert json.load(open(os.path.join(minatar_run, "hparams.json")))["world_model"]["frame_decoding"] == "objects"
    assert set(summary["policy"]) == {"sampling_temp_0.0_max_noops_0", "sampling_temp_1.0_max_noops_0"}
    assert 0.0 <= summary["world_model"]["pixel_accuracy"] <= 1.0
    assert 0.0 <= summary["world_model"]["end_accuracy"] <= 1.0 and summary["world_model"]["end_loss"] > 0


@pytest.mark.parametrize("end_target", ["last_frame", "ending_step"])
def test_the_world_models_env_ends_episodes_where_the_model_says(minatar_run, end_target):
    """A model sure that every frame is its episode's last: each env's episode ends on the step
    after it, and the env starts again from real frames; one sure that every step ends its
    episode (end_target=ending_step) ends each on that step."""
    hparams = create_hparams("rlmb_minatar_tiny", f"world_model.predict_episode_ends=True,world_model.end_target={end_target}")
    model = load_world_model(hparams.world_model, os.path.join(minatar_run, "world_model"), (10, 10, 4), 3, 2)
    model.frame_model.end_head.kernel.assign(tf.zeros_like(model.frame_model.end_head.kernel))
    model.frame_model.end_head.bias.assign([-10.0, 10.0])
    store = FrameStore(os.path.join(minatar_run, "data"))
    env = SimulatedBatchEnv(model, store, 3, gym.spaces.Discrete(3))
    env.reset(seed=0)
    starts = {w.tobytes() for e in store.episodes for w in store.frames(e.indices)}
    terminated = []
    for _ in range(4):
        step = env.step(np.zeros(3, np.int64))
        terminated.append(step.terminated)
        if step.terminated.any():  # restarted from a real window: its last frame is a real one
            assert all(frame.tobytes() in starts for frame in step.observation)
    length = 2 if end_target == "last_frame" else 1
    np.testing.assert_array_equal(terminated, [[False] * 3, [True] * 3] * 2 if length == 2 else [[True] * 3] * 4)
    assert (step.episode_length == length).all()



def test_check_model_drift_counts_each_object_of_the_runs_frames(minatar_run):
    """rlkit/rl/analysis/check_model_drift.py on the tiny MinAtar run: a row per step and the other-action
    row, per channel named by its object; Breakout always has one paddle, ball and trail cell."""
    result = subprocess.run([sys.executable, "-m", "rlkit.rl.analysis.check_model_drift",
                             f"--run={minatar_run}", "--horizon=2", "--rollouts=8"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line]
    assert lines[0].startswith(f"{minatar_run}: 8 rollouts from the ") and "data epochs [2] with 6 steps" in lines[0]
    for temperature, table in ((0, lines[1:6]), (1, lines[6:11])):
        assert table[0] == f"temperature {temperature}"
        assert table[1] == "step | paddle | ball | trail | brick | reward, real / model | ended"
        assert [row.split(" | ")[0] for row in table[2:]] == ["1", "2", "1, other actions"]
        for row in table[2:]:
            for cell in row.split(" | ")[1:5]:  # "real / model (wrong)": never fewer wrong than the counts differ
                real, model, wrong = (float(x.strip("()")) for x in cell.replace("/", "").split())
                assert wrong >= abs(real - model) - 1e-6, row
            assert [float(c.split(" / ")[0]) for c in row.split(" | ")[1:4]] == [1.0, 1.0, 1.0], row
        assert 0.0 <= float(table[3].split(" | ")[-1]) <= 1.0


def test_check_episode_ends_reads_the_run_both_ways(minatar_run):
    """rlkit/rl/analysis/check_episode_ends.py on the tiny run's complete episodes, its frames read
    the way the run's env reads them and the other way: flagged shares from two distances before
    the end, and the end head's probabilities from real frames."""
    for decoding in ("objects", "likeliest"):
        result = run_module("rlkit.rl.analysis.check_episode_ends", f"--wm_dir={minatar_run}/world_model",
                            f"--data_dir={minatar_run}/data", f"--frame_decoding={decoding}", "--episodes=16")
        assert result.returncode == 0, result.stderr[-3000:]
        *flagged, probabilities = result.stdout.strip().splitlines()
        counts = []
        for line, distance in zip(flagged, (4, 7), strict=True):  # the last frame 4, then 7, steps in
            count, last, before, earlier = re.fullmatch(
                rf"(\d+) episodes from {distance} steps before their end: end flagged at the real last frame "
                r"([\d.]+), at the 3 frames before it ([\d.]+), earlier ([\d.]+)", line).groups()
            assert 0 < int(count) <= 16 and all(0.0 <= float(share) <= 1.0 for share in (last, before, earlier))
            counts.append(int(count))
        shares = re.fullmatch(r"P\(end\) from real frames: at the real last frames ([\d.]+) \(above 0\.5: ([\d.]+)\), "
                              r"at the 3 before them ([\d.]+), at (\d+) other frames ([\d.]+); "
                              r"last above other \(AUC\) ([\d.]+)", probabilities).groups()
        assert int(shares[3]) == 3 * counts[0]  # as many other frames as frames before the last ones
        assert all(0.0 <= float(share) <= 1.0 for i, share in enumerate(shares) if i != 3)


def test_check_episode_ends_steps_a_model_of_ending_steps_once_more(minatar_run, tmp_path):
    """A model whose end head predicts ending steps is checked on the step taken on each last
    frame: from 4 steps before the end its rollout has 5 steps, one of them earlier than the 3
    before the last."""
    run = tmp_path / "ending_steps"
    shutil.copytree(os.path.join(minatar_run, "world_model"), run / "world_model")
    hparams = json.load(open(os.path.join(minatar_run, "hparams.json")))
    hparams["world_model"]["end_target"] = "ending_step"
    (run / "hparams.json").write_text(json.dumps(hparams))
    result = run_module("rlkit.rl.analysis.check_episode_ends", f"--wm_dir={run}/world_model",
                        f"--data_dir={minatar_run}/data", "--episodes=16")
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.fullmatch(r"\d+ episodes from 4 steps before their end: end flagged at the real last frame [\d.]+, "
                        r"at the 3 frames before it [\d.]+, earlier [\d.]+", result.stdout.splitlines()[0])
    assert "last above other (AUC)" in result.stdout.splitlines()[-1]


def test_check_model_drift_reads_data_alone_with_a_world_model_named_apart(minatar_run, tmp_path):
    """Data without a SimPLe world model next to it (collect's) needs --wm_dir: one line without it."""
    data_run = str(tmp_path / "random")
    result = run_module("rlkit.rl.collect", "--hparams_set=collect_random_tiny", "--hparams=game=minatar/breakout",
                        f"--output_dir={data_run}")
    assert result.returncode == 0, result.stderr[-3000:]
    drift = ("rlkit.rl.analysis.check_model_drift", f"--run={data_run}", "--horizon=2", "--rollouts=4")
    assert_one_line_error(run_module(*drift), "has no SimPLe world model")
    result = run_module(*drift, f"--wm_dir={minatar_run}/world_model")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith(f"{data_run}: 4 rollouts from the ")
    # PPO inside the model needs a loop run's settings: one line, not a traceback.
    assert_one_line_error(run_module("rlkit.rl.analysis.check_simulated_reward", f"--run={data_run}",
                                     f"--wm_dir={minatar_run}/world_model"), "not a trainer_model_based SimPLe run")


def test_a_minatar_run_exports_colour_pngs_and_plays_and_records(minatar_run, tmp_path):
    result = run_module("rlkit.rl.inspect", os.path.join(minatar_run, "data"),
                        f"--export_png={tmp_path / 'png'}")
    assert result.returncode == 0, result.stderr[-3000:]
    image = cv2.imread(str(tmp_path / "png" / "episode_0" / "frame_00000.png"))
    assert image.shape == (80, 80, 3) and len(np.unique(image.reshape(-1, 3), axis=0)) >= 3  # black and colours

    result = run_module("rlkit.rl.player", f"--wm_dir={minatar_run}/world_model", "--dry_run",
                        f"--video_dir={tmp_path / 'player'}")
    assert result.returncode == 0, result.stderr[-3000:]
    frames = imageio.mimread(str(tmp_path / "player" / "player_minatar_breakout_sim_and_real.mp4"))
    assert len(frames) == 8 and frames[0].shape[1] >= 3 * 80

    result = run_module("rlkit.rl.evaluator", f"--policy_dir={minatar_run}/policy", "--hparams=eval_step_limit=10",
                        f"--eval_metrics_dir={tmp_path / 'eval'}", f"--debug_video_path={tmp_path / 'videos'}",
                        "--num_debug_videos=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(os.listdir(tmp_path / "videos")) == 2  # one per sampling temperature
    hparams = json.load(open(os.path.join(minatar_run, "hparams.json")))
    with open(tmp_path / "eval" / "summary.json") as f:
        (cells,) = json.load(f)["results"].values()  # the newest epoch's policy
    assert {cell["episodes"] for cell in cells.values()} == {hparams["final_eval_batch_size"]}  # the run's final evaluation

    # Asked for more episodes than the run's final evaluation plays, the evaluator plays them.
    episodes = hparams["final_eval_batch_size"] + 3
    result = run_module("rlkit.rl.evaluator", f"--policy_dir={minatar_run}/policy",
                        f"--hparams=eval_step_limit=10,eval_batch_size={episodes},eval_sampling_temps=[1.0]",
                        f"--eval_metrics_dir={tmp_path / 'more'}")
    assert result.returncode == 0, result.stderr[-3000:]
    with open(tmp_path / "more" / "summary.json") as f:
        (cells,) = json.load(f)["results"].values()
    assert [cell["episodes"] for cell in cells.values()] == [episodes]


def test_a_game_needing_minatar_says_how_to_install_it(tmp_path):
    """Without the package, one line names the extra to install (run with minatar hidden)."""
    hidden = tmp_path / "hide"
    hidden.mkdir()
    (hidden / "minatar.py").write_text("raise ImportError('hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": f"{hidden}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "rlkit.rl.trainer_model_free", "--hparams_set=rlmf_minatar_tiny",
                             f"--output_dir={tmp_path / 'run'}"], capture_output=True, text=True, env=env, timeout=120)
    assert_one_line_error(result, "need the minatar package", 'pip install -e ".[minatar]"')
    assert not (tmp_path / "run").exists()
