import os
import shutil

import imageio.v2 as imageio
import numpy as np
import pygame
import pytest

from conftest import SMALL_PONG_FRAME, SMALL_PONG_SHOWN, assert_one_line_error, run_module
from rlkit.data_generators.atari import AtariBatchEnv
from rlkit.hparams import create_hparams
from rlkit.rl.experiments.play import Player, action_for, play
from rlkit.rl.learners.policy_export import find_policies, load_policy
from rlkit.rl.loops.world_model_training import load_world_model

PLAYER = "rlkit.rl.player"
ZOOM = 2
FRAME_SHAPE = SMALL_PONG_FRAME  # the session run's
SHOWN_HEIGHT, SHOWN_WIDTH, _ = SMALL_PONG_SHOWN
COLUMN_WIDTH, COLUMN_HEIGHT = SHOWN_WIDTH * ZOOM, (SHOWN_HEIGHT + 14) * ZOOM  # a frame under its header
GAP = 2 * ZOOM  # between columns
STATUS_HEIGHT = 2 * 14 * ZOOM
THREE_COLUMNS = 3 * COLUMN_WIDTH + 2 * GAP


@pytest.fixture(scope="module")
def hparams():
    return create_hparams("rlmb_tiny")


@pytest.fixture(scope="module")
def world_model(rlmb_tiny_run, hparams):
    return load_world_model(hparams.world_model, os.path.join(rlmb_tiny_run[0], "world_model"), FRAME_SHAPE, 6, 256)


@pytest.fixture(autouse=True)
def display():
    """pygame's display on SDL's dummy driver (the conftest sets SDL_VIDEODRIVER=dummy)."""
    pygame.display.init()
    pygame.display.set_mode((1, 1))
    yield
    pygame.quit()


def post_keys(*keys):
    for key in keys:
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key))
        pygame.event.post(pygame.event.Event(pygame.KEYUP, key=key))


def meanings(game):
    with AtariBatchEnv(game, 1) as env:
        return env.action_meanings


def test_keys_map_through_the_games_action_meanings():
    pong, breakout, seaquest = meanings("pong"), meanings("breakout"), meanings("seaquest")
    assert action_for({"FIRE"}, pong) == pong.index("FIRE")
    assert action_for({"UP"}, pong) == pong.index("NOOP")  # Pong has no UP: its paddle moves with RIGHT/LEFT
    assert action_for({"RIGHT"}, pong) == pong.index("RIGHT")
    assert action_for({"LEFT", "FIRE"}, pong) == pong.index("LEFTFIRE")
    assert action_for({"FIRE"}, breakout) == breakout.index("FIRE")
    assert action_for({"UP"}, breakout) == breakout.index("NOOP")
    assert action_for({"UP", "FIRE"}, breakout) == breakout.index("FIRE")  # the part the game has
    assert action_for({"UP", "FIRE"}, seaquest) == seaquest.index("UPFIRE")
    assert action_for({"UP", "LEFT", "FIRE"}, seaquest) == seaquest.index("UPLEFTFIRE")
    assert action_for({"UP", "DOWN"}, seaquest) == seaquest.index("NOOP")  # opposite keys cancel


def test_window_shows_three_columns_and_x_resynchronises(world_model, hparams, tmp_path):
    player = Player("sim_and_real", hparams, world_model, zoom=ZOOM)
    post_keys(pygame.K_d, pygame.K_SPACE, pygame.K_n)  # three steps, each on a key press
    screen = play(player, fps=1000, max_frames=3)
    assert player.real.frames == 3 and player.simulated.frames == 3
    post_keys(pygame.K_x, pygame.K_q)
    screen = play(player, fps=1000)
    assert np.array_equal(player.simulated.frame, player.real.frame)

    path = str(tmp_path / "window.png")
    pygame.image.save(screen, path)
    shot = imageio.imread(path)[..., :3]
    assert shot.shape == (COLUMN_HEIGHT + STATUS_HEIGHT, THREE_COLUMNS, 3)
    model, real, difference = (shot[:COLUMN_HEIGHT, i * (COLUMN_WIDTH + GAP):i * (COLUMN_WIDTH + GAP) + COLUMN_WIDTH]
                               for i in range(3))
    header = 14 * ZOOM
    np.testing.assert_array_equal(model[header:], real[header:])  # after X the model shows the real frames
    assert not difference[header:].any()  # so the difference column is black
    assert real[header:].any() and real[:header].any()  # a frame, and a header with text
    assert shot[COLUMN_HEIGHT:].any()  # the status lines


def test_real_time_mode_and_policy_control(world_model, hparams, rlmb_tiny_run):
    policy_dir = find_policies(os.path.join(rlmb_tiny_run[0], "policy"), all_epochs=False)[-1][1]
    policy = load_policy(policy_dir, (4,) + FRAME_SHAPE)
    player = Player("sim_and_real", hparams, world_model, policy=policy, zoom=ZOOM)
    post_keys(pygame.K_c)  # real time: a step every frame
    play(player, fps=1000, max_frames=4)
    assert not player.waiting and player.real.frames == 4
    post_keys(pygame.K_c, pygame.K_p)  # waiting again, but the policy plays
    play(player, fps=1000, max_frames=3)
    assert player.policy_control and player.real.frames == 7
    post_keys(pygame.K_p, pygame.K_r)  # back to the keys; R restarts both games
    play(player, fps=1000, max_frames=2)
    assert not player.policy_control and player.real.frames == 0 and player.simulated.frames == 0


def test_dry_run_records_a_decodable_video(rlmb_tiny_run, tmp_path):
    run_dir, _ = rlmb_tiny_run
    result = run_module(PLAYER, f"--wm_dir={run_dir}/world_model", "--zoom=2", "--dry_run", f"--video_dir={tmp_path}")
    assert result.returncode == 0, result.stderr[-3000:]
    frames = [frame for frame in imageio.get_reader(str(tmp_path / "player_pong_sim_and_real.mp4"))]
    assert len(frames) == 8
    assert frames[0].shape == (COLUMN_HEIGHT + STATUS_HEIGHT, THREE_COLUMNS, 3)


def test_simulated_mode_starts_from_stored_data(world_model, hparams, rlmb_tiny_run):
    from rlkit.data_generators import storage
    from rlkit.data_generators.frame_store import FrameStore

    data_dir = os.path.join(rlmb_tiny_run[0], "data")
    episodes = storage.read_rollouts(data_dir, [0]).episodes
    player = Player("simulated", hparams, world_model, store=FrameStore(data_dir, [0]), zoom=ZOOM)
    assert any(np.array_equal(player.simulated.history, e.frames[:4]) for e in episodes)
    player.step(action=0)
    assert player.canvas().shape == (COLUMN_HEIGHT + STATUS_HEIGHT, COLUMN_WIDTH, 3)


def test_missing_or_incompatible_world_model_gets_one_line(rlmb_tiny_run, tmp_path):
    run_dir, _ = rlmb_tiny_run
    assert_one_line_error(run_module(PLAYER, f"--wm_dir={tmp_path}", "--loop_hparams_set=rlmb_tiny", "--dry_run"),
                          "no world model checkpoint")
    assert_one_line_error(run_module(PLAYER, f"--wm_dir={run_dir}/world_model", "--loop_hparams_set=rlmb_tiny",
                                     "--loop_hparams=game=breakout", "--dry_run"),
                          "trained with game='pong'")


def test_a_world_model_alone_for_another_game_or_a_game_without_frames_gets_one_line(rlmb_tiny_run, tmp_path):
    """Copied away from its run, only the checkpoint itself says which game it models."""
    run_dir, _ = rlmb_tiny_run
    shutil.copytree(os.path.join(run_dir, "world_model"), tmp_path / "world_model")
    before = sorted(os.listdir(tmp_path / "world_model"))
    result = run_module(PLAYER, f"--wm_dir={tmp_path / 'world_model'}", "--loop_hparams_set=rlmb_tiny",
                        "--loop_hparams=game=breakout", "--dry_run")
    assert_one_line_error(result, "cannot restore checkpoint", "game, frame size")
    assert "WARNING" not in result.stderr  # TensorFlow's teardown warnings do not bury the line
    assert sorted(os.listdir(tmp_path / "world_model")) == before
    assert_one_line_error(run_module(PLAYER, f"--wm_dir={tmp_path / 'world_model'}", "--loop_hparams_set=rlmb_tiny",
                                     "--loop_hparams=game=CartPole-v1", "--dry_run"),
                          "'CartPole-v1' gives no image frames")
