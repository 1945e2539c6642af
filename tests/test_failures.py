"""Faults beyond a user's typo: a second writer on a run dir, a full disk, a damaged checkpoint.
Each goes through the commands, as a user meets it."""

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from conftest import assert_one_line_error
from rlkit.data_generators import storage
from rlkit import run_lock
from rlkit.run_lock import LOCK_FILE

COLLECT = "rlkit.rl.collect"
MODEL_FREE = "rlkit.rl.trainer_model_free"
COLLECT_FLAGS = ("--hparams_set=collect_random_tiny",)


def start(module, *args):
    return subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for(condition, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_second_writer_is_refused_and_a_killed_ones_lock_is_taken_over(cli, tmp_path):
    out = str(tmp_path / "run")
    shards = os.path.join(out, "data", "epoch_000", "shard_*.npz")
    args = ("--hparams_set=collect_random", "--hparams=game=minatar/breakout,num_envs=2,num_agent_steps=100000000,"
            "shard_steps=20", f"--output_dir={out}")
    first = start(COLLECT, *args)
    try:
        assert wait_for(lambda: glob.glob(shards)), first.stderr.read()
        holder = json.load(open(os.path.join(out, LOCK_FILE)))
        assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
        started = time.time()
        second = cli(COLLECT, *args)
        assert time.time() - started < 30
        assert_one_line_error(second, f"{out} is being written by pid {first.pid} on host {socket.gethostname()}",
                              f"kill {first.pid}")
        assert first.poll() is None  # the first goes on
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert os.path.exists(os.path.join(out, LOCK_FILE))  # left behind by the kill
    before = set(glob.glob(shards))
    rerun = start(COLLECT, *args)
    try:  # until the rerun has stored a shard of its own
        assert wait_for(lambda: set(glob.glob(shards)) - before)
    finally:
        rerun.send_signal(signal.SIGTERM)
        _, stderr = rerun.communicate(timeout=60)
    assert rerun.returncode == 143, stderr[-3000:]
    assert f"Taking over the lock of {out} from pid {first.pid}" in stderr, stderr
    assert not os.path.exists(os.path.join(out, LOCK_FILE))  # released on the way out


def test_a_lock_held_on_another_host_refuses_until_its_heartbeat_stops(cli, tmp_path):
    out = tmp_path / "data_run"
    out.mkdir()
    holder = {"host": "elsewhere", "pid": 4242, "since": time.time() - 600, "heartbeat": time.time()}
    (out / LOCK_FILE).write_text(json.dumps(holder))
    refused = cli(COLLECT, *COLLECT_FLAGS, f"--output_dir={out}")
    assert_one_line_error(refused, "is being written by pid 4242 on host elsewhere", "stop it on its host")
    assert not (out / "data").exists()
    (out / LOCK_FILE).write_text(json.dumps(dict(holder, heartbeat=time.time() - 3600)))
    taken = cli(COLLECT, *COLLECT_FLAGS, f"--output_dir={out}")
    assert taken.returncode == 0, taken.stderr[-3000:]
    assert "Taking over the lock" in taken.stderr and storage.stored_steps(str(out / "data"), 0) >= 400


# The collect command with rlkit.fileio's writes failing as a full disk fails them, from the
# `after`-th file it writes on: os.fdopen's file raises ENOSPC on write (in fileio alone).
FULL_DISK = """
import errno, os, runpy, sys, types
import rlkit.fileio as fileio

class FullDisk:
    def __init__(self, f):
        self.f = f
    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.f.close()
    def __getattr__(self, name):
        return getattr(self.f, name)

opened = [0]
def fdopen(fd, *args, **kwargs):
    opened[0] += 1
    f = os.fdopen(fd, *args, **kwargs)
    return FullDisk(f) if opened[0] >= {after} else f

fileio.os = types.SimpleNamespace(**dict(vars(os), fdopen=fdopen))
sys.argv = ["collect"] + sys.argv[1:]
runpy.run_module("rlkit.rl.collect", run_name="__main__", alter_sys=True)
"""


def test_a_full_disk_stops_with_one_line_leaves_no_partial_file_and_the_rerun_resumes(cli, tmp_path):
    out = tmp_path / "run"
    # Files 1-5 are the run's own (hparams.json, run.json, command.txt, provenance.json,
    # operative_config.gin), then one shard per 50 steps: the third shard meets the full disk.
    full = subprocess.run([sys.executable, "-c", FULL_DISK.replace("{after}", "8"), *COLLECT_FLAGS,
                           f"--output_dir={out}"], capture_output=True, text=True, timeout=120)
    assert full.returncode == 74, full.stderr[-3000:]
    assert_one_line_error(full, "could not write ", "shard_00002.npz: No space left on device",
                          f"rerun the same command to resume the run in {out}")
    data = str(out / "data")
    whole = sorted(os.listdir(os.path.join(data, "epoch_000")))
    assert whole == ["shard_00000.npz", "shard_00001.npz"]  # no temporary file, nothing partial
    kept = {name: os.path.getmtime(os.path.join(data, "epoch_000", name)) for name in whole}
    assert not (out / LOCK_FILE).exists()
    resumed = cli(COLLECT, *COLLECT_FLAGS, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert storage.stored_steps(data, 0) == 400
    assert all(os.path.getmtime(os.path.join(data, "epoch_000", n)) == t for n, t in kept.items())


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_small_tmpfs_fills_up_in_a_checkpoint_and_the_run_resumes_once_it_grows(cli, tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(small)]).returncode != 0:
        pytest.skip("this machine cannot mount a tmpfs")
    try:
        args = ("--hparams_set=rlmf_cartpole", "--hparams=num_env_steps=2048,checkpoint_every_iterations=1",
                f"--output_dir={small}/run")
        user_env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}  # rlkit's default
        full = subprocess.run([sys.executable, "-m", MODEL_FREE, *args], capture_output=True, text=True,
                              timeout=300, env=user_env)
        assert full.returncode == 74, full.stderr[-3000:]
        # The file TensorFlow could not write (a checkpoint's), not a piece of its device name.
        assert_one_line_error(full, f"could not write {small}/run/", "No space left on device",
                              "rerun the same command")
        assert "/job" not in full.stderr and "OP_REQUIRES" not in full.stderr and "rendezvous" not in full.stderr
        subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
        resumed = cli(MODEL_FREE, *args)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert os.path.exists(small / "run" / "policy" / "saved_model.pb")
    finally:
        subprocess.run(["umount", "-l", str(small)])


def truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def test_a_damaged_latest_checkpoint_falls_back_to_the_one_before(cli, tmp_path):
    out = str(tmp_path / "run")
    args = ("--hparams_set=rlmf_cartpole", "--hparams=num_env_steps=512,checkpoint_every_iterations=1,"
            "keep_checkpoints=3,eval_every_iterations=100", f"--output_dir={out}")
    first = cli(MODEL_FREE, *args)
    assert first.returncode == 0, first.stderr[-3000:]
    directory = os.path.join(out, "checkpoints")
    checkpoints = tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths
    assert len(checkpoints) >= 2
    truncate(checkpoints[-1] + ".data-00000-of-00001")
    os.remove(os.path.join(out, "eval", "final.json"))  # as if not ended: a rerun reads its checkpoints
    resumed = cli(MODEL_FREE, *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    warnings = [line for line in resumed.stderr.splitlines() if "is damaged" in line]
    assert len(warnings) == 1 and os.path.basename(checkpoints[-1]) in warnings[0], resumed.stderr[-3000:]
    assert f"Resumed from {checkpoints[-2]}" in resumed.stderr and "Traceback" not in resumed.stderr

    for path in tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths:
        truncate(path + ".index")
    os.remove(os.path.join(out, "eval", "final.json"))
    broken = cli(MODEL_FREE, *args)
    assert_one_line_error(broken, f"no whole checkpoint in {directory}", "move")


def test_a_gs_run_dir_is_locked_by_an_object_in_the_bucket(bucket, cli):
    from rlkit import run_lock
    from rlkit.errors import UserError

    run_dir = f"gs://{bucket.name}/locked_run"
    with run_lock.hold(run_dir):
        held = json.loads(bucket.blob(f"locked_run/{LOCK_FILE}").download_as_text())
        assert held["pid"] == os.getpid() and held["host"] == socket.gethostname()
        with pytest.raises(UserError, match=f"{run_dir} is being written by pid {os.getpid()}"):
            with run_lock.hold(run_dir):
                pass
        refused = cli(COLLECT, *COLLECT_FLAGS, f"--output_dir={run_dir}")
        assert_one_line_error(refused, f"is being written by pid {os.getpid()}")
    assert bucket.get_blob(f"locked_run/{LOCK_FILE}") is None  # released
    stale = {"host": "elsewhere", "pid": 1, "since": 0, "heartbeat": time.time() - 3600}
    bucket.blob(f"locked_run/{LOCK_FILE}").upload_from_string(json.dumps(stale))
    taken = cli(COLLECT, *COLLECT_FLAGS, f"--output_dir={run_dir}")
    assert taken.returncode == 0, taken.stderr[-3000:]
    assert "Taking over the lock" in taken.stderr and bucket.get_blob(f"locked_run/{LOCK_FILE}") is None
    assert bucket.get_blob("locked_run/data/epoch_000/shard_00000.npz") is not None


def test_a_second_writer_is_refused_before_tensorflow_loads(tmp_path):
    """The lock is probed before the set's checks (which load TensorFlow: 170 s on a loaded
    machine before the refusal used to come)."""
    out = str(tmp_path / "run")
    with run_lock.hold(out):
        result = subprocess.run([sys.executable, "-X", "importtime", "-m", "rlkit.rl.trainer_model_based",
                                 "--hparams_set=rlmb_minatar_ends", "--hparams=game=minatar/breakout",
                                 f"--output_dir={out}"], capture_output=True, text=True, timeout=120)
        assert os.listdir(out) == [LOCK_FILE]  # the probe wrote nothing
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "rlkit.cli" in imported and not {"tensorflow", "keras"} & imported
    assert_one_line_error(result, f"{out} is being written by pid {os.getpid()}")


def test_the_full_disk_line_names_the_file_in_tensorflows_own_error_text():
    from rlkit.errors import out_of_space

    message = ("{{function_node __wrapped__SaveV2_dtypes_2_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
               "/runs/r/policy/checkpoints/ckpt-2_temp/part-00000-of-00001.data-00000-of-00001.tempstate1751; "
               "No space left on device [Op:SaveV2]")
    error = tf.errors.ResourceExhaustedError(None, None, message)
    assert out_of_space(error) == ("/runs/r/policy/checkpoints/ckpt-2_temp/part-00000-of-00001.data-00000-of-00001"
                                   ".tempstate1751", "No space left on device")
    event_file = tf.errors.ResourceExhaustedError(None, None, "/runs/r/train/events.out.tfevents.1.vm; Disk quota "
                                                              "exceeded")
    assert out_of_space(event_file) == ("/runs/r/train/events.out.tfevents.1.vm", "Disk quota exceeded")
