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


def collect_random_pong(data_dir, num_steps, num_envs=2, seed=0):
    """Writes `num_steps` steps of real Pong with random actions as one shard of epoch 0."""
    import numpy as np

    from rlkit.data_generators import storage
    from rlkit.data_generators.atari import AtariBatchEnv

    rng = np.random.default_rng(seed)
    with AtariBatchEnv("pong", num_envs) as env:
        writer = storage.RolloutWriter(data_dir, epoch=0, num_envs=num_envs)
        observation = env.reset(seed=seed)
        for _ in range(num_steps):
            actions = rng.integers(env.action_space.n, size=num_envs)
            step = env.step(actions)
            writer.add(observation, actions, step)
            observation = step.observation
        writer.write_shard()
