import os
import subprocess
import sys

import pytest

import rlkit  # noqa: F401  (first, so TensorFlow starts with rlkit's settings, as in the commands)

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def run_module(module, *args, timeout=300):
    """Runs `python -m module args` the way a user would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line_error(result, *fragments):
    """A user mistake: non-zero exit, one 'error:' line on stderr, no traceback."""
    assert result.returncode != 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


@pytest.fixture
def cli():
    return run_module
