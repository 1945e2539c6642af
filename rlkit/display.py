"""Opening a pygame window next to TensorFlow.

SDL's default framebuffer on X11 is GL-accelerated: it loads the system's OpenGL driver, and
Mesa's software rasterizer (a VM, a remote desktop, Xvfb) and its LLVM-based hardware drivers
(radeonsi) then call into the LLVM symbols that libtensorflow_framework exports, and the process
dies with a segmentation fault. rlkit's windows blit numpy frames and need no GL, so they open
with SDL's plain software framebuffer.
"""

import os
import sys

from rlkit.errors import UserError

_VIDEO_DRIVER_SET_HERE = False  # SDL_VIDEODRIVER=dummy set by draw_offscreen_quietly, not the user


def user_chose_video_driver():
    return bool(os.environ.get("SDL_VIDEODRIVER")) and not _VIDEO_DRIVER_SET_HERE


def has_display():
    """Whether a window can be shown: the user chose SDL's video driver, or (on Linux) an X or
    Wayland display is set; macOS and Windows always have one."""
    if user_chose_video_driver():
        return True
    return not sys.platform.startswith("linux") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def no_display(why, instead=""):
    """The one line for a window that cannot show: why, and where it would."""
    return UserError(f"no display to open a window on ({why}): run it on a desktop, over ssh -X, or under Xvfb "
                     f"(xvfb-run){'; ' + instead if instead else ''}")


def require_display(instead=""):
    """Refuses, in one line and before anything loads, to open a window where none can show:
    SDL would fall back to an invisible window and wait for keys no one can press."""
    if not has_display():
        raise no_display("DISPLAY and WAYLAND_DISPLAY are unset", instead)


def draw_offscreen_quietly():
    """For pygame drawing into pictures (a gymnasium env's render_mode="rgb_array"): SDL's dummy
    sound driver, and where no display exists its dummy video driver, so SDL prints no errors of
    its own ("XDG_RUNTIME_DIR is invalid", no sound server) while it looks for them."""
    global _VIDEO_DRIVER_SET_HERE
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    if not has_display() and "SDL_VIDEODRIVER" not in os.environ:
        os.environ["SDL_VIDEODRIVER"] = "dummy"
        _VIDEO_DRIVER_SET_HERE = True


def open_window(width, height, caption):
    """A pygame window of `width` x `height` pixels without a GL-backed framebuffer (unless the
    user set SDL_FRAMEBUFFER_ACCELERATION); returns its surface."""
    require_display()
    os.environ.setdefault("SDL_FRAMEBUFFER_ACCELERATION", "0")
    import pygame

    pygame.display.init()
    if pygame.display.get_driver() in ("offscreen", "dummy") and not user_chose_video_driver():
        pygame.display.quit()
        raise no_display(f"SDL's video driver is {pygame.display.get_driver()!r}")
    screen = pygame.display.set_mode((width, height))
    pygame.display.set_caption(caption)
    return screen
