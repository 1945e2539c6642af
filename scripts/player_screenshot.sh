#!/usr/bin/env bash
# A screenshot of the player's real window: a run's world model next to the real game, its policy playing.
#
#     bash scripts/player_screenshot.sh RUN OUTPUT.png [SECONDS] [FPS]
#
# Starts a virtual X display (Xvfb), opens the player on RUN/world_model with RUN/policy, presses P
# (the policy plays) and after SECONDS (default 6) at FPS steps a second (default 5) presses P again
# and grabs the window. Needs Xvfb and xdotool (apt install xvfb xdotool); the grab is Pillow's.
# README's docs/player.png: bash scripts/player_screenshot.sh runs/pong/simple_pong_cpu_s0 docs/player.png 8
set -euo pipefail
RUN=$1 OUTPUT=$2 SECONDS_PLAYED=${3:-6} FPS=${4:-5}
PYTHON=${PYTHON:-python}
for tool in Xvfb xdotool; do
  command -v $tool >/dev/null || { echo "error: $tool is missing: apt install xvfb xdotool" >&2; exit 1; }
done
NUMBER=90
while [ -e /tmp/.X$NUMBER-lock ] || [ -e /tmp/.X11-unix/X$NUMBER ]; do NUMBER=$((NUMBER + 1)); done  # a free display
export DISPLAY=:$NUMBER
Xvfb $DISPLAY -screen 0 1600x1000x24 >/dev/null 2>&1 &
XVFB=$!
PLAYER=
trap '[ -n "$PLAYER" ] && kill $PLAYER 2>/dev/null; kill $XVFB 2>/dev/null' EXIT
sleep 2
$PYTHON -m rlkit.rl.player --wm_dir=$RUN/world_model --policy_dir=$RUN/policy --zoom=3 --fps=$FPS &
PLAYER=$!
WINDOW=
for _ in $(seq 120); do  # the player loads its world model and policy before it opens the window
  WINDOW=$(xdotool search --classname player.py 2>/dev/null | head -1 || true)
  [ -n "$WINDOW" ] && break
  kill -0 $PLAYER 2>/dev/null || { echo "error: the player exited before opening its window" >&2; exit 1; }
  sleep 1
done
[ -n "$WINDOW" ] || { echo "error: no player window after 120 s" >&2; exit 1; }
sleep 1
xdotool windowfocus --sync $WINDOW key p
sleep $SECONDS_PLAYED
xdotool key p
sleep 1
eval "$(xdotool getwindowgeometry --shell $WINDOW)"
$PYTHON -c "from PIL import ImageGrab; import sys; \
ImageGrab.grab(bbox=($X, $Y, $X + $WIDTH, $Y + $HEIGHT), xdisplay='$DISPLAY').save(sys.argv[1])" "$OUTPUT"
xdotool key q
wait $PLAYER
PLAYER=
echo "wrote $OUTPUT (${WIDTH}x${HEIGHT})"
