"""The player in a real window on a real X server (Xvfb), driven by real key presses.

The other player tests use SDL's dummy driver, which never loads a display driver next to
TensorFlow; this one is what a user on a VM or a remote desktop runs.
"""

import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import SMALL_PONG_SHOWN

TOOLS = ("Xvfb", "xdotool", "xwininfo")
ZOOM = 2
SHOWN_HEIGHT, SHOWN_WIDTH, _ = SMALL_PONG_SHOWN  # the session run's frames in the window
COLUMN_WIDTH, COLUMN_HEIGHT = SHOWN_WIDTH * ZOOM, (SHOWN_HEIGHT + 14) * ZOOM
GAP, HEADER = 2 * ZOOM, 14 * ZOOM


@pytest.fixture
def x_server(tmp_path):
    """A fresh Xvfb on a free display, its screen kept as an XWD file: (DISPLAY, screen file)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: apt-get install xvfb xdotool x11-utils): "
                    "the real-display player test needs them")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24",
                               "-fbdir", str(tmp_path), "-nolisten", "tcp"],
                              pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        display = pipe.readline().strip()  # Xvfb writes the display number it chose once it is ready
    if not display:
        server.kill()
        pytest.skip("Xvfb did not start")
    yield f":{display}", str(tmp_path / "Xvfb_screen0")
    server.terminate()
    server.wait(timeout=10)


def read_xwd(path):
    """The screen of an XWD file (Xvfb's -fbdir) as [H, W, 3] uint8 RGB."""
    data = open(path, "rb").read()
    header = np.frombuffer(data[:100], ">u4")
    header_size, width, height = int(header[0]), int(header[4]), int(header[5])
    byte_order, bits_per_pixel, bytes_per_line, num_colors = (int(header[i]) for i in (7, 11, 12, 19))
    assert bits_per_pixel == 32, bits_per_pixel
    start = header_size + 12 * num_colors  # the colormap follows the header
    pixels = np.frombuffer(data[start:start + bytes_per_line * height], "<u4" if byte_order == 0 else ">u4")
    pixels = pixels.reshape(height, bytes_per_line // 4)[:, :width]
    return np.stack([(pixels >> shift) & 255 for shift in (16, 8, 0)], axis=-1).astype(np.uint8)


def window_geometry(env, title, process, timeout=120):
    """(x, y, width, height) of the top-level window named `title`, once `process` has mapped it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the player exited with {process.returncode} before its window opened: "
                                 f"{process.stderr.read()[-2000:]}")
        tree = subprocess.run(["xwininfo", "-root", "-children"], env=env, capture_output=True, text=True).stdout
        match = re.search(re.escape(f'"{title}"') + r".*?(\d+)x(\d+)\+(-?\d+)\+(-?\d+)", tree)
        if match:
            width, height, x, y = map(int, match.groups())
            return x, y, width, height
        time.sleep(0.5)
    raise AssertionError(f"no window {title!r} within {timeout} s")


def test_player_opens_a_real_window_and_plays_on_keys(x_server, rlmb_tiny_run):
    display, screen_file = x_server
    run_dir, _ = rlmb_tiny_run
    # The user's environment: a real display, no SDL settings of rlkit's tests.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDL_")}
    env["DISPLAY"] = display
    player = subprocess.Popen([sys.executable, "-m", "rlkit.rl.player", f"--wm_dir={run_dir}/world_model",
                               "--loop_hparams_set=rlmb_tiny", "--loop_hparams=game=pong", f"--zoom={ZOOM}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        x, y, width, height = window_geometry(env, "rlkit player: pong", player)
        assert (width, height) == (3 * COLUMN_WIDTH + 2 * GAP, COLUMN_HEIGHT + 2 * HEADER)
        # The window opens while the world model loads, its columns blank; then the game shows.
        real_column = lambda: read_xwd(screen_file)[y + HEADER:y + COLUMN_HEIGHT,  # noqa: E731
                                                    x + COLUMN_WIDTH + GAP:x + 2 * COLUMN_WIDTH + GAP]
        deadline = time.monotonic() + 120
        while not real_column().any() and time.monotonic() < deadline and player.poll() is None:
            time.sleep(0.3)
        subprocess.run(["xdotool", "mousemove", str(x + width // 2), str(y + height // 2)], env=env, check=True)
        for key in ("d", "space", "n", "x"):  # three steps, then the model restarts from the real frames
            subprocess.run(["xdotool", "key", key], env=env, check=True)
            time.sleep(0.3)
        deadline = time.monotonic() + 20
        while True:
            window = read_xwd(screen_file)[y:y + height, x:x + width]
            model, real, difference = (window[:COLUMN_HEIGHT, i * (COLUMN_WIDTH + GAP):i * (COLUMN_WIDTH + GAP) + COLUMN_WIDTH]
                                       for i in range(3))
            if np.array_equal(model[HEADER:], real[HEADER:]) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        np.testing.assert_array_equal(model[HEADER:], real[HEADER:])  # after X the model shows the real frames
        assert real[HEADER:].any() and real[:HEADER].any()             # a Pong frame under its header
        assert not difference[HEADER:].any()                            # so the difference column is black
        subprocess.run(["xdotool", "key", "Escape"], env=env, check=True)
        _, stderr = player.communicate(timeout=60)
    finally:
        player.kill()
    assert player.returncode == 0, stderr[-3000:]
