import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

BUCKET = "rlkit-test"

import rlkit  # noqa: F401  (first, so TensorFlow starts with rlkit's settings, as in the commands)
from rlkit.data_generators import make_env  # noqa: E402
from rlkit.hparams import create_hparams  # noqa: E402
from rlkit.video import display_frame  # noqa: E402

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def pytest_configure(config):
    # The slowest tests in every run's summary (CI's too), to keep the suite inside its 10 minutes;
    # --durations=0 (all of them) is left as asked.
    if config.option.durations is None:
        config.option.durations = 20


def run_module(module, *args, timeout=300):
    """Runs `python -m module args` the way a user would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          timeout=timeout)


def run_module_saying_if_tensorflow_loaded(module, *args, timeout=300):
    """run_module, its stdout ending with `tensorflow loaded: True` or `False` as the command left it."""
    code = ("import atexit, runpy, sys; "
            "atexit.register(lambda: print('tensorflow loaded:', 'tensorflow' in sys.modules)); "
            f"sys.argv = [{module!r}] + sys.argv[1:]; runpy.run_module({module!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(result, *fragments):
    """A user mistake: non-zero exit, one 'error:' line on stderr, no traceback."""
    assert result.returncode != 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


@pytest.fixture(scope="session", autouse=True)
def temporary_files_under_pytests_basetemp(tmp_path_factory):
    """The temporary files of the tests and of the commands they start go under pytest's basetemp,
    which pytest prunes to its last three sessions: TensorFlow's autograph writes a module per
    traced function to the temp dir and deletes it at exit, which the processes the tests kill
    on purpose never reach (about 80 such files in /tmp per suite run before this). Ray keeps
    its own temp dir: its socket paths must stay short."""
    os.environ.setdefault("RAY_TMPDIR", tempfile.gettempdir())
    os.environ["TMPDIR"] = str(tmp_path_factory.mktemp("tmp"))
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    yield


@pytest.fixture
def cli():
    return run_module


# rlmb_tiny's Pong frames, half SimPLe's 105x80 each way: the session loop run's, and the world
# models' unit tests train on them too (their cost grows with the pixels: a 256-way softmax per
# pixel channel). SMALL_PONG_SHOWN: as display_frame shows them (small frames enlarged).
SMALL_PONG_FRAME = make_env.frame_shape(create_hparams("rlmb_tiny"))
SMALL_PONG_SHOWN = display_frame(np.zeros(SMALL_PONG_FRAME, np.uint8)).shape


def collect_random_pong(data_dir, num_steps, num_envs=2, seed=0, frame_shape=(105, 80, 3)):
    """Writes `num_steps` steps of real Pong of `frame_shape` with random actions as one shard of epoch 0."""
    from rlkit.data_generators import storage
    from rlkit.data_generators.atari import AtariBatchEnv

    rng = np.random.default_rng(seed)
    with AtariBatchEnv("pong", num_envs, frame_height=frame_shape[0], frame_width=frame_shape[1]) as env:
        writer = storage.RolloutWriter(data_dir, epoch=0, num_envs=num_envs)
        observation = env.reset(seed=seed)
        for _ in range(num_steps):
            actions = rng.integers(env.action_space.n, size=num_envs)
            step = env.step(actions)
            writer.add(observation, actions, step)
            observation = step.observation
        writer.write_shard()


# The session's loop run sets one nested value through the plain flags, which the flag tests check;
# the tests that rerun it (killed and resumed) pass the same value through the loop_ aliases.
RLMB_TINY_RUN_FLAGS = ("--hparams_set=rlmb_tiny", "--hparams=ppo.learning_rate=3e-4")


def shared_run(tmp_path_factory, name, module, *args):
    """One run of `python -m module args` for the whole session: (output dir, stderr).

    pytest-xdist's workers share it through a lock: the first to ask runs it, the others wait
    for it. The tests that take it read it and never write to it."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the directory all workers' temp dirs live in
    out, stderr_file = shared / name, shared / f"{name}.stderr"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stderr_file.exists():
            shutil.rmtree(out, ignore_errors=True)
            result = run_module(module, *args, f"--output_dir={out}")
            assert result.returncode == 0, result.stderr[-3000:]
            stderr_file.write_text(result.stderr)
    return str(out), stderr_file.read_text()


@pytest.fixture(scope="session")
def rlmb_tiny_run(tmp_path_factory):
    """One uninterrupted rlmb_tiny loop run through the command line (the suite's longest single step)."""
    return shared_run(tmp_path_factory, "rlmb_tiny_run", "rlkit.rl.trainer_model_based", *RLMB_TINY_RUN_FLAGS)


@pytest.fixture(scope="session")
def rlmf_tiny_run(tmp_path_factory):
    """One uninterrupted rlmf_tiny run (PPO on Pong, 128 steps) through the command line."""
    return shared_run(tmp_path_factory, "rlmf_tiny_run", "rlkit.rl.trainer_model_free", "--hparams_set=rlmf_tiny")


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def gcs_emulator():
    """A local Google Cloud Storage emulator (gcp-storage-emulator); yields its STORAGE_EMULATOR_HOST.

    The real google-cloud-storage client talks to it when that variable is set, in this process
    and in the commands the tests start.
    """
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "gcp_storage_emulator", "start", "--port", str(port),
                                "--in-memory"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    host = f"http://localhost:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("localhost", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("the GCS emulator did not start")
            time.sleep(0.2)
    previous = os.environ.get("STORAGE_EMULATOR_HOST")
    os.environ["STORAGE_EMULATOR_HOST"] = host
    yield host
    if previous is None:
        del os.environ["STORAGE_EMULATOR_HOST"]
    else:
        os.environ["STORAGE_EMULATOR_HOST"] = previous
    process.kill()
    process.wait()


@pytest.fixture
def bucket(gcs_emulator, tmp_path, monkeypatch):
    """The test bucket in the emulator (created once), with a fresh download cache per test."""
    monkeypatch.setenv("RLKIT_CACHE_DIR", str(tmp_path / "cache"))
    from rlkit import gcs

    client = gcs.client()
    return client.lookup_bucket(BUCKET) or client.create_bucket(BUCKET)
