"""Prints what a data dir holds: shards, episodes, frames and the reward histogram.

    python -m rlkit.rl.inspect OUTPUT_DIR/data [--export_png=DIR]

With --export_png, every stored frame is written as DIR/episode_{id}/frame_{t:05d}.png.
"""

import collections
import os

import cv2
import numpy as np
from absl import flags

from rlkit import gcs
from rlkit.data_generators import storage
from rlkit.errors import UserError, run_command
from rlkit.video import display_frame

MAX_EPISODES_LISTED = 20


def define_flags():
    """Flags exist only when the module runs as a command, so importing it defines none."""
    flags.DEFINE_string("export_png", None, "Write the frames as PNG images under this directory.")
    flags.DEFINE_integer("max_episodes_listed", MAX_EPISODES_LISTED, "List at most this many episodes one per line.")


FLAGS = flags.FLAGS


def summarize(data, max_episodes_listed=MAX_EPISODES_LISTED):
    """The report `inspect` prints, as lines."""
    episodes = data.episodes
    complete = [e for e in episodes if e.complete]
    lines = [f"shards: {len(data.shards)} read, {len(data.skipped)} unreadable",
             f"frames: {data.num_steps:,}",
             f"episodes: {len(episodes)} ({len(complete)} complete, {len(episodes) - len(complete)} partial)"]
    if complete:
        returns = [float(e.raw_rewards.sum()) for e in complete]
        lengths = [len(e) for e in complete]
        lines.append(f"complete episodes: return mean {np.mean(returns):.2f} min {min(returns):g} "
                     f"max {max(returns):g}; length mean {np.mean(lengths):.1f}")
    for episode in episodes[:max_episodes_listed]:
        status = "complete" if episode.complete else "partial"
        lines.append(f"  episode {episode.episode_id}: {len(episode)} frames, "
                     f"return {float(episode.raw_rewards.sum()):g} ({status})")
    if len(episodes) > max_episodes_listed:
        lines.append(f"  ... {len(episodes) - max_episodes_listed} more")
    for name in ("rewards", "raw_rewards"):
        counts = collections.Counter()
        for episode in episodes:
            values, numbers = np.unique(getattr(episode, name), return_counts=True)
            counts.update(dict(zip(values.tolist(), numbers.tolist())))
        histogram = ", ".join(f"{value:g}: {count}" for value, count in sorted(counts.items()))
        label = "reward histogram (clipped)" if name == "rewards" else "reward histogram (raw)"
        lines.append(f"{label}: {histogram or 'empty'}")
    for path in data.skipped:
        lines.append(f"unreadable shard skipped: {path}")
    return lines


def export_png(data, directory):
    """Writes every frame as a PNG; returns how many were written."""
    written = 0
    for episode in data.episodes:
        episode_dir = os.path.join(directory, f"episode_{episode.episode_id}")
        os.makedirs(episode_dir, exist_ok=True)
        for t, frame in enumerate(episode.frames):
            image = cv2.cvtColor(display_frame(frame), cv2.COLOR_RGB2BGR)
            if not cv2.imwrite(os.path.join(episode_dir, f"frame_{t:05d}.png"), image):
                raise UserError(f"cannot write PNG files to {episode_dir!r}")
            written += 1
    return written


def main(argv):
    if len(argv) != 2:
        raise UserError("usage: python -m rlkit.rl.inspect DATA_DIR [--export_png=DIR]")
    data_dir = gcs.local_input(argv[1])
    if not os.path.isdir(data_dir):
        raise UserError(f"data dir {data_dir!r} does not exist")
    data = storage.read_rollouts(data_dir)
    if not data.shards and not data.skipped:
        raise UserError(f"{data_dir!r} holds no shards (expected {data_dir}/epoch_*/shard_*.npz)")
    print("\n".join(summarize(data, FLAGS.max_episodes_listed)))
    if FLAGS.export_png:
        with gcs.local_output(FLAGS.export_png) as png_dir:
            count = export_png(data, png_dir)
        print(f"wrote {count} PNG frames to {FLAGS.export_png}")


if __name__ == "__main__":
    define_flags()
    run_command(main)
