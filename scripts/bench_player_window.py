"""How soon the player shows its window and its first game frame, against another checkout.

    python scripts/bench_player_window.py --baseline=CHECKOUT [--run=RUN] [--runs=5]

On a virtual X display (Xvfb), starts `python -m rlkit.rl.player --wm_dir=RUN/world_model
--policy_dir=RUN/policy` from this checkout and from CHECKOUT (a `git worktree` of the commit to
compare with), in turn, and times from the start of the process to (a) the window being mapped
and (b) the real game's column showing a frame (the first game frame). Prints the medians and
the ratios baseline / this checkout. RUN defaults to a dreamer_v2_tiny run made first (a Dreamer
run: TensorFlow, the RSSM and a recurrent policy to load). Needs Xvfb and xdotool.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))
from test_player_x11 import read_xwd  # noqa: E402  (the XWD reader of the real-display test)


def start_xvfb(fbdir):
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x1024x24", "-fbdir", fbdir,
                               "-nolisten", "tcp"], pass_fds=(write_end,), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        return server, ":" + pipe.readline().strip()


def time_to_window_and_frame(checkout, run, display, screen_file, game):
    """(seconds to the window, seconds to the first game frame) of one player start in `checkout`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDL_")}
    env.update(DISPLAY=display, PYTHONPATH=checkout)
    started = time.monotonic()
    player = subprocess.Popen([sys.executable, "-m", "rlkit.rl.player", f"--wm_dir={run}/world_model",
                               f"--policy_dir={run}/policy", "--zoom=4"], cwd=checkout, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    window = frame = None
    try:
        while frame is None and time.monotonic() - started < 300 and player.poll() is None:
            tree = subprocess.run(["xwininfo", "-root", "-children"], env=env, capture_output=True, text=True).stdout
            match = re.search(re.escape(f'"rlkit player: {game}"') + r".*?(\d+)x(\d+)\+(-?\d+)\+(-?\d+)", tree)
            if match:
                window = window or time.monotonic() - started
                width, height, x, y = map(int, match.groups())
                # The real game's column (the second of three), below its header: blank while loading.
                if read_xwd(screen_file)[y + height // 4:y + height // 2, x + width // 3:x + 2 * width // 3].any():
                    frame = time.monotonic() - started
            time.sleep(0.05)
    finally:
        player.kill()
        player.wait()
    if frame is None:
        raise SystemExit(f"no game frame from the player in {checkout}")
    return window, frame


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--run", help="a run dir with world_model/ and policy/ (default: a dreamer_v2_tiny run)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        run = args.run
        if run is None:
            run = os.path.join(scratch, "dreamer_tiny")
            subprocess.run([sys.executable, "-m", "rlkit.rl.trainer_model_based", "--hparams_set=dreamer_v2_tiny",
                            f"--output_dir={run}"], check=True, capture_output=True)
        import json
        game = json.load(open(os.path.join(run, "hparams.json")))["game"]
        server, display = start_xvfb(scratch)
        try:
            times = {"baseline": [], "this checkout": []}
            for _ in range(args.runs):  # in turn, so a drift in the machine's speed hits both alike
                for name, checkout in (("baseline", args.baseline), ("this checkout", HERE)):
                    times[name].append(time_to_window_and_frame(checkout, run, display,
                                                                os.path.join(scratch, "Xvfb_screen0"), game))
        finally:
            server.terminate()
    medians = {name: np.median(np.array(t), axis=0) for name, t in times.items()}
    for name, (window, frame) in medians.items():
        print(f"{name:>14}: window after {window:.2f} s, first game frame after {frame:.2f} s (median of {args.runs})")
    ratio = medians["baseline"] / medians["this checkout"]
    print(f"baseline / this checkout: window {ratio[0]:.2f}x, first game frame {ratio[1]:.2f}x")


if __name__ == "__main__":
    main()
