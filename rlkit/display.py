"""Opening a pygame window next to TensorFlow.

SDL's default framebuffer on X11 is GL-accelerated: it loads the system's OpenGL driver, and
Mesa's software rasterizer (a VM, a remote desktop, Xvfb) and its LLVM-based hardware drivers
(radeonsi) then call into the LLVM symbols that libtensorflow_framework exports, and the process
dies with a segmentation fault. rlkit's windows blit numpy frames and need no GL, so they open
with SDL's plain software framebuffer.
"""

import os


def open_window(width, height, caption):
    """A pygame window of `width` x `height` pixels without a GL-backed framebuffer (unless the
    user set SDL_FRAMEBUFFER_ACCELERATION); returns its surface."""
    os.environ.setdefault("SDL_FRAMEBUFFER_ACCELERATION", "0")
    import pygame

    pygame.display.init()
    screen = pygame.display.set_mode((width, height))
    pygame.display.set_caption(caption)
    return screen
