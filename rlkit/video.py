"""Frames with a text header, and MP4 files: evaluation videos and the player's recordings."""

import os

import cv2
import numpy as np

HEADER_HEIGHT = 14  # pixels, before zoom: one line of small text


def upscale(frame, zoom):
    """Nearest-neighbour zoom, so single pixels stay sharp."""
    return np.repeat(np.repeat(frame, zoom, axis=0), zoom, axis=1) if zoom > 1 else frame


def with_header(frame, text, zoom=1):
    """`frame` [H, W, C] uint8 zoomed, under a black strip with `text` in white."""
    frame = upscale(frame, zoom)
    if frame.shape[-1] == 1:
        frame = np.repeat(frame, 3, axis=-1)
    header = np.zeros((HEADER_HEIGHT * zoom, frame.shape[1], 3), np.uint8)
    scale = 0.3 * zoom
    cv2.putText(header, text, (2 * zoom, int(10 * zoom)), cv2.FONT_HERSHEY_SIMPLEX, scale,
                (255, 255, 255), max(1, zoom // 2), cv2.LINE_AA)
    return np.concatenate([header, frame], axis=0)


def episode_frames(frames, rewards, zoom=2):
    """Frames of one episode, each headed with the cumulative reward, the last reward and its index."""
    cumulative = np.cumsum(rewards)
    return [with_header(frame, f"cum {cumulative[t]:g} r {rewards[t]:g} f {t}", zoom)
            for t, frame in enumerate(frames)]


def write_mp4(path, frames, fps=15):
    """Writes uint8 RGB frames (all one size, even height and width) as an H.264 MP4."""
    import imageio.v2 as imageio

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + ".partial.mp4"
    with imageio.get_writer(partial, fps=fps, codec="libx264", macro_block_size=2,
                            ffmpeg_log_level="error") as writer:
        for frame in frames:
            writer.append_data(frame)
    os.replace(partial, path)
