"""Atomic file writes: a reader sees the old file or the whole new one, never a part."""

import io
import os
import tempfile

import numpy as np

TEMP_PREFIX = ".tmp-"


def _current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates files readable by their owner only; finished files get the usual mode.
_FILE_MODE = 0o666 & ~_current_umask()


def atomic_write_bytes(path, data):
    """Writes `data` to `path` through a temporary file in the same directory and a rename."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=TEMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp_path, _FILE_MODE)
        os.replace(tmp_path, path)
    except BaseException as e:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
        if isinstance(e, OSError) and e.filename is None:
            e.filename = path  # so that a full disk's one line names the file it stopped
        raise


def atomic_write_text(path, text):
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_npz(path, compressed=False, **arrays):
    """`arrays` as one .npz file, atomically. The archive is built in memory with Ctrl-C and
    SIGTERM held: a stop inside numpy's zip writing raised a ValueError from its cleanup over the
    stop (a traceback and exit 1 instead of the one stop line; CI saw it in a collect run)."""
    from rlkit.errors import signals_held

    buffer = io.BytesIO()
    with signals_held():
        (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def is_temporary(path):
    """True for the temporary files `atomic_write_bytes` leaves behind when killed mid-write."""
    return os.path.basename(path).startswith(TEMP_PREFIX)
