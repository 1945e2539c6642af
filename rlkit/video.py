"""Frames with a text header, and MP4 files: evaluation videos and the player's recordings."""

import os

import cv2
import numpy as np

HEADER_HEIGHT = 14  # pixels, before zoom: one line of small text


def upscale(frame, zoom):
    """Nearest-neighbour zoom, so single pixels stay sharp."""
    return np.repeat(np.repeat(frame, zoom, axis=0), zoom, axis=1) if zoom > 1 else frame


def text_strip(lines, width, zoom=1, scale=0.3):
    """A black strip `width` pixels wide with one line of white text per entry of `lines`,
    shrunk where a line would not fit."""
    strip = np.zeros((HEADER_HEIGHT * zoom * len(lines), width, 3), np.uint8)
    font, thickness = cv2.FONT_HERSHEY_SIMPLEX, max(1, zoom // 2)
    for i, line in enumerate(lines):
        size = scale * zoom
        text_width = cv2.getTextSize(line, font, size, thickness)[0][0]
        if text_width > width - 4 * zoom:
            size *= 0.95 * (width - 4 * zoom) / text_width
        cv2.putText(strip, line, (2 * zoom, (HEADER_HEIGHT * i + 10) * zoom), font, size, (255, 255, 255),
                    thickness, cv2.LINE_AA)
    return strip


def with_header(frame, text, zoom=1):
    """`frame` [H, W, C] uint8 zoomed, under a black strip with `text` in white."""
    frame = upscale(frame, zoom)
    if frame.shape[-1] == 1:
        frame = np.repeat(frame, 3, axis=-1)
    return np.concatenate([text_strip([text], frame.shape[1], zoom), frame], axis=0)


def episode_frames(frames, rewards, zoom=2):
    """Frames of one episode, each headed with the cumulative reward, the last reward and its index."""
    cumulative = np.cumsum(rewards)
    return [with_header(frame, f"cum {cumulative[t]:g} r {rewards[t]:g} f {t}", zoom)
            for t, frame in enumerate(frames)]


def write_mp4(path, frames, fps=15):
    """Writes uint8 RGB frames (all one size) as an H.264 MP4, padded to even sizes with black."""
    import imageio.v2 as imageio

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + ".partial.mp4"
    with imageio.get_writer(partial, fps=fps, codec="libx264", macro_block_size=2,
                            ffmpeg_log_level="error") as writer:
        for frame in frames:
            height, width = frame.shape[:2]
            writer.append_data(np.pad(frame, ((0, height % 2), (0, width % 2), (0, 0))))
    os.replace(partial, path)
