"""Frames as people see them, with a text header, and MP4 files: evaluation videos, the player's
window and recordings, exported PNGs and dream images."""

import os

import cv2
import numpy as np

HEADER_HEIGHT = 14  # pixels, before zoom: one line of small text
MIN_DISPLAY_WIDTH = 80  # smaller frames (MinAtar's 10x10) are enlarged to about an Atari frame's width
# One colour per channel for frames whose channels are not RGB: MinAtar's, one kind of object each.
CHANNEL_COLOURS = np.array([(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
                            (140, 86, 75), (227, 119, 194), (200, 200, 200), (188, 189, 34), (23, 190, 207)],
                           np.uint8)


def to_rgb(frames):
    """[..., H, W, C] uint8 -> [..., H, W, 3]: RGB as it is, grayscale repeated, other channel
    counts (MinAtar's on/off object channels) one colour per channel, the highest channel that is
    on in front, black where none is."""
    channels = frames.shape[-1]
    if channels == 3:
        return frames
    if channels == 1:
        return np.repeat(frames, 3, axis=-1)
    on = frames > 127
    # 1 + the highest channel on at each pixel, 0 where none is.
    front = np.where(on.any(axis=-1), channels - np.argmax(on[..., ::-1], axis=-1), 0)
    palette = np.concatenate([np.zeros((1, 3), np.uint8), np.resize(CHANNEL_COLOURS, (channels, 3))])
    return palette[front]


def display_frame(frames):
    """Frames [..., H, W, C] as RGB images at least MIN_DISPLAY_WIDTH pixels wide."""
    return upscale(to_rgb(frames), -(-MIN_DISPLAY_WIDTH // frames.shape[-2]))


def upscale(frame, zoom):
    """Nearest-neighbour zoom of [..., H, W, C], so single pixels stay sharp."""
    return np.repeat(np.repeat(frame, zoom, axis=-3), zoom, axis=-2) if zoom > 1 else frame


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
    """`frame` [H, W, C] uint8 as displayed and zoomed, under a black strip with `text` in white."""
    frame = upscale(display_frame(frame), zoom)
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
