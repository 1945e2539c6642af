"""One writer per run directory: every command that writes a run holds its lock for its lifetime.

    with run_lock.hold(output_dir):      # local or gs://
        ...                              # a second process on output_dir exits at once

Local directories: RUN/.rlkit.lock, held with `flock`, which the kernel releases when the
holder dies however it dies, so a lock left by a SIGKILLed process on this host is simply taken
over. The file names the holder (host, pid, since when) for the refusal line, and the holder
rewrites its heartbeat every HEARTBEAT_SECONDS: on a directory shared between hosts, where
`flock` need not reach across them, a lock whose heartbeat is older than STALE_SECONDS is
taken over, a fresher one refuses.

gs:// directories: the object PREFIX/.rlkit.lock, created with `if_generation_match=0` (GCS's
way to make a write exclusive: of two processes creating it at once, one fails), rewritten as a
heartbeat with the generation it holds, and deleted at the end. A stale one (no heartbeat for
STALE_SECONDS: a killed holder) is deleted, with its generation, and created anew.
"""

import contextlib
import datetime
import fcntl
import json
import os
import socket
import threading
import time

from absl import logging

from rlkit import gcs
from rlkit.errors import UserError

LOCK_FILE = gcs.LOCK_FILE
HEARTBEAT_SECONDS = 10.0
STALE_SECONDS = float(os.environ.get("RLKIT_LOCK_STALE_SECONDS", "60"))


def _holder_record(since):
    return {"host": socket.gethostname(), "pid": os.getpid(), "since": since, "heartbeat": time.time()}


def _describe(holder):
    if not holder:
        return "another process (its lock file names no holder)"
    since = datetime.datetime.fromtimestamp(holder.get("since", 0)).strftime("%Y-%m-%d %H:%M:%S")
    return f"pid {holder.get('pid')} on host {holder.get('host')} (since {since})"


def _refuse(run_dir, holder):
    here = holder and holder.get("host") == socket.gethostname()
    how = f"`kill {holder.get('pid')}`" if here else "stop it on its host"
    raise UserError(f"{run_dir} is being written by {_describe(holder)}: wait for it to finish, or {how} and rerun "
                    "to resume the run; two writers would interleave its checkpoints")


def _is_fresh(holder):
    return bool(holder) and time.time() - holder.get("heartbeat", 0) < STALE_SECONDS


class _Heartbeat:
    """Calls `beat()` every HEARTBEAT_SECONDS on a daemon thread until stopped."""

    def __init__(self, beat):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(beat,), daemon=True)
        self._thread.start()

    def _run(self, beat):
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                beat()
            except Exception as e:  # noqa: BLE001  (a missed beat only ages the lock; the run goes on)
                logging.warning("Could not refresh the run lock: %s", e)

    def stop(self):
        self._stop.set()
        self._thread.join()


def _read_local(fd):
    try:
        return json.loads(os.pread(fd, 4096, 0).decode() or "null")
    except ValueError:
        return None


def _write_local(fd, record):
    data = json.dumps(record).encode()
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def _open_locked(path, run_dir):
    """An fd of `path`, flock'ed; refuses while a live process on this host holds it."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_local(fd)
            os.close(fd)
            _refuse(run_dir, holder)
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file as we opened it: lock the new one


@contextlib.contextmanager
def _hold_local(run_dir):
    created = not os.path.isdir(run_dir)
    try:
        os.makedirs(run_dir, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output dir {run_dir!r}: {e.strerror}") from None
    path = os.path.join(run_dir, LOCK_FILE)
    try:
        fd = _open_locked(path, run_dir)
    except PermissionError:
        raise UserError(f"output dir {run_dir!r} is not writable; choose another --output_dir") from None
    try:
        holder = _read_local(fd)
        if holder and holder.get("host") != socket.gethostname() and _is_fresh(holder):
            _refuse(run_dir, holder)  # a live holder on another host, where flock does not reach
        if holder:
            logging.warning("Taking over the lock of %s from %s, which is gone", run_dir, _describe(holder))
        record = _holder_record(time.time())
        _write_local(fd, record)
        heartbeat = _Heartbeat(lambda: _write_local(fd, dict(record, heartbeat=time.time())))
        try:
            yield
        finally:
            heartbeat.stop()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            if created:  # a command that stopped before writing anything leaves no dir behind
                with contextlib.suppress(OSError):
                    os.rmdir(run_dir)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _hold_remote(run_dir):
    from google.api_core import exceptions

    bucket_name, prefix = gcs.split(run_dir)
    with gcs.clear_errors(run_dir):
        blob = gcs.client().bucket(bucket_name).blob(f"{prefix}/{LOCK_FILE}" if prefix else LOCK_FILE)
        record = _holder_record(time.time())
        for _ in range(3):
            existing = blob.bucket.get_blob(blob.name, **gcs.call_settings())
            if existing is not None:
                try:
                    held = json.loads(existing.download_as_text(**gcs.call_settings()))
                except (exceptions.NotFound, ValueError):
                    held = {}
                if _is_fresh(held):
                    _refuse(run_dir, held)
                logging.warning("Taking over the lock of %s from %s, whose heartbeat stopped", run_dir,
                                _describe(held))
                with contextlib.suppress(exceptions.NotFound, exceptions.PreconditionFailed):
                    existing.delete(if_generation_match=existing.generation, **gcs.call_settings())
            try:
                blob.upload_from_string(json.dumps(record), if_generation_match=0,
                                        **gcs.call_settings())
                break
            except exceptions.PreconditionFailed:
                continue  # another process created it first: read who
        else:
            _refuse(run_dir, None)
        generation = [blob.generation]

    def beat():
        with gcs.clear_errors(run_dir):
            blob.upload_from_string(json.dumps(dict(record, heartbeat=time.time())),
                                    if_generation_match=generation[0], **gcs.call_settings())
            generation[0] = blob.generation

    heartbeat = _Heartbeat(beat)
    try:
        yield
    finally:
        heartbeat.stop()
        with contextlib.suppress(UserError, exceptions.NotFound, exceptions.PreconditionFailed), \
                gcs.clear_errors(run_dir):
            blob.delete(if_generation_match=generation[0], **gcs.call_settings())


def _probe_local(run_dir):
    path = os.path.join(run_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # no lock file (or none we may read): nobody to refuse for; hold() says the rest
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a shared lock: two probes never collide
        except BlockingIOError:
            _refuse(run_dir, _read_local(fd))
        holder = _read_local(fd)
        if holder and holder.get("host") != socket.gethostname() and _is_fresh(holder):
            _refuse(run_dir, holder)
    finally:
        os.close(fd)  # closing releases the shared lock


def _probe_remote(run_dir):
    from google.api_core import exceptions

    bucket_name, prefix = gcs.split(run_dir)
    with gcs.clear_errors(run_dir):
        existing = gcs.client().bucket(bucket_name).get_blob(f"{prefix}/{LOCK_FILE}" if prefix else LOCK_FILE,
                                                              **gcs.call_settings())
        if existing is None:
            return
        try:
            held = json.loads(existing.download_as_text(**gcs.call_settings()))
        except (exceptions.NotFound, ValueError):
            return
    if _is_fresh(held):
        _refuse(run_dir, held)


def probe(run_dir):
    """Refuses, as `hold` would, while another live process holds the lock of `run_dir`; writes
    nothing and holds nothing. Commands call it first, so a second writer is refused before
    anything slow (TensorFlow's import, a set's checks) runs; `hold` still decides."""
    (_probe_remote if gcs.is_remote(run_dir) else _probe_local)(run_dir)


def hold(run_dir):
    """A context holding the lock of `run_dir` (local or gs://); refuses with one line while
    another live process holds it, and takes over one left by a killed process."""
    return _hold_remote(run_dir) if gcs.is_remote(run_dir) else _hold_local(run_dir)


