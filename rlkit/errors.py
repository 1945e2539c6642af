"""The one exception type for mistakes a user can fix, and how every command reports it.

Commands run their `main` through `run_command`, which prints a `UserError` as a single line
and exits non-zero, turns Ctrl-C and SIGTERM into one line saying how to resume, and a write
that ran out of space (a full disk or quota, a read-only remount) into one line saying what
could not be written; anything else is a bug: its traceback, and exit status 1. `--help` and
the other help flags print the help and exit 0.
"""

import atexit
import contextlib
import difflib
import errno
import logging as std_logging
import os
import re
import select
import signal
import sys
import threading
import time
import traceback

from absl import app, flags, logging

_run_in_progress = None  # the output dir of the run this command started, for the Ctrl-C line


class UserError(Exception):
    """A mistake in what the user asked for (a name, a value, a path), with what to do about it."""


def closest_names(name, candidates, n=3):
    """Names in `candidates` that look like `name`, best first, for 'did you mean' messages."""
    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.6)


def did_you_mean(name, candidates):
    """' did you mean 'x'?' or '' when nothing is close."""
    matches = closest_names(name, candidates)
    if not matches:
        return ""
    return "; did you mean " + " or ".join(repr(m) for m in matches) + "?"


def set_run_in_progress(output_dir):
    """The dir a Ctrl-C's line tells the user to resume (what a command that writes runs without
    start_run, such as a search, is working in)."""
    global _run_in_progress
    _run_in_progress = output_dir


# Why a write failed for want of space, by errno, and as TensorFlow's C++ writers word it.
OUT_OF_SPACE = {errno.ENOSPC: "No space left on device", errno.EDQUOT: "Disk quota exceeded",
                errno.EROFS: "Read-only file system"}
OUT_OF_SPACE_STATUS = 74  # sysexits' EX_IOERR


def out_of_space(error):
    """(what could not be written, why) if `error`, or an error it was raised from, is a write
    that ran out of space or met a read-only filesystem; else None."""
    while error is not None:
        if isinstance(error, OSError) and error.errno in OUT_OF_SPACE:
            return error.filename or "a file", OUT_OF_SPACE[error.errno]
        if type(error).__module__.startswith("tensorflow"):  # checkpoints, event files, SavedModels
            message = str(error)
            why = next((text for text in OUT_OF_SPACE.values() if text in message), None)
            if why:
                return tensorflow_failed_path(message, why) or "a TensorFlow file", why
        error = error.__cause__ or error.__context__
    return None


# Paths in TensorFlow's messages that are not files: its device names ("/job:localhost/replica:0/...").
_DEVICE_PATH = re.compile(r"/(job|replica|task|device):")


def tensorflow_failed_path(message, why):
    """The file a TensorFlow error `message` says could not be written, or None. TensorFlow words
    it "{{function_node ..._device_/job:localhost/...}} PATH; No space left on device [Op:SaveV2]":
    the path before the reason, not the first slash (its device name)."""
    named = re.search(r"(/[^\s;'\"]+); " + re.escape(why), message)
    if named and not _DEVICE_PATH.match(named.group(1)):
        return named.group(1)
    paths = [p for p in re.findall(r"/[^\s;'\"]+", message) if not _DEVICE_PATH.match(p)]
    return paths[0] if paths else None


class WithoutTensorFlowInfo(std_logging.Filter):
    """Drops TensorFlow's and TensorBoard's own info lines (checkpoint sharding, SavedModel
    assets, event-file reading), which would bury the progress lines; their warnings and errors
    still show."""

    def filter(self, record):
        return record.levelno >= std_logging.WARNING or not any(
            f"{os.sep}{package}{os.sep}" in record.pathname for package in ("tensorflow", "tensorboard"))


class Stopped(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is, so both unwind the same way."""


_stop_asked = []  # "Ctrl-C" or "SIGTERM" once one has asked this command to stop


def _in_finalizer(frame):
    """Whether `frame` runs inside an object's __del__ (TensorFlow's traced functions have one,
    run whenever the garbage collector frees them), where Python prints an exception and drops it."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


_deferred_stop = []  # the signal of a stop that landed in a finalizer, until it is raised outside one


def _send_until_raised(signum):
    """The signal sent again to the main thread every 10 ms, from a thread of its own, until its
    handler raises the stop outside the finalizer. To the main thread itself, so that a wait there
    (a sleep) is cut short as by the first; again and again, as one that lands while the main
    thread runs C code (the garbage collector) waits for its next Python line to be handled."""
    if _deferred_stop:
        return  # already being sent
    _deferred_stop.append(signum)

    def send():
        while _deferred_stop:
            time.sleep(0.01)
            if _deferred_stop:
                signal.pthread_kill(threading.main_thread().ident, signum)

    threading.Thread(target=send, daemon=True).start()


def _raise_stopped(signum, frame):
    if _in_finalizer(frame):  # raised there, the stop would be lost and the command go on
        _send_until_raised(signum)
        return
    _deferred_stop.clear()
    _stop_asked.append("SIGTERM")
    raise Stopped()


def _raise_interrupted(signum, frame):
    if _in_finalizer(frame):
        _send_until_raised(signum)
        return
    _deferred_stop.clear()
    _stop_asked.append("Ctrl-C")
    raise KeyboardInterrupt()


@contextlib.contextmanager
def signals_held():
    """Ctrl-C and SIGTERM wait until the block is done, then stop the command as they would have.

    For TensorFlow's writes from Python (a checkpoint save): KeyboardInterrupt raised in the
    middle of one can crash the interpreter (CI saw a segfault in the save counter's
    assign_add) instead of unwinding, and a save let to end is one checkpoint more to resume
    from. Signal handlers belong to the main thread; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []
    previous = {signum: signal.signal(signum, lambda signum, frame: pending.append(signum))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        if pending:
            signal.raise_signal(pending[0])  # runs its handler now: KeyboardInterrupt or Stopped


def _quiet_shutdown():
    """After the one line that says why a command stopped, TensorFlow's warnings about objects
    torn down half-built (a checkpoint that did not fit, say) would only bury it."""
    std_logging.getLogger("tensorflow").setLevel(std_logging.ERROR)


def _stdout_reader_gone():
    """Whether stdout is a pipe whose reader has left: polling its write end then reports an error."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):  # stdout closed or not a file
        return False


def _exit_now(status):
    """Exits with `status` once the exit hooks have run (Ray's shutdown, logging's flush),
    without the interpreter's teardown: garbage-collecting TensorFlow's traced graphs kept a
    stopped SimPLe loop at full CPU for 4 to 35 s after its last line (the run lock already
    released). Everything the command writes is written whole before this (summaries are
    flushed as they are written, files replaced whole), so the teardown has nothing to save."""
    atexit._run_exitfuncs()  # noqa: SLF001  (what sys.exit would run, without the rest)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _report_stop(name):
    _quiet_shutdown()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the message short
    hint = (f"rerun the same command to resume the run in {_run_in_progress}" if _run_in_progress
            else "nothing was left half-written")
    print(f"stopped by {name}: {hint}", file=sys.stderr)
    _exit_now(143 if name == "SIGTERM" else 130)


def run_command(main):
    """absl's app.run, with UserError printed as one line and exit status 2, a write out of space
    as one line and exit status 74, and Ctrl-C or SIGTERM as one line saying how to resume and
    exit status 130 or 143.

    Both stop the command where it is: pending `finally` blocks run (a gs:// output dir gets
    its last upload) and files are only ever replaced whole (`fileio.atomic_write_*`), so what
    a run wrote stays readable and a rerun of the same command resumes it. A signal that lands
    while TensorFlow runs Python of its own (tracing a function) can come out as TensorFlow's
    error rather than as the interrupt; a command asked to stop stops the same way then."""
    def main_with_user_errors(argv):
        std_logging.getLogger("tensorflow").setLevel(std_logging.WARNING)
        logging.get_absl_handler().addFilter(WithoutTensorFlowInfo())
        signal.signal(signal.SIGTERM, _raise_stopped)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where it is ignored (nohup, &)
            signal.signal(signal.SIGINT, _raise_interrupted)
        try:
            return main(argv)
        except UserError as e:
            _quiet_shutdown()
            print(f"error: {e}", file=sys.stderr)
            _exit_now(2)
        except KeyboardInterrupt as e:
            _report_stop("SIGTERM" if isinstance(e, Stopped) else "Ctrl-C")
        except BrokenPipeError:
            if not _stdout_reader_gone():  # another pipe broke: a bug, with its traceback
                traceback.print_exc()
                _exit_now(1)
            # The reader of the output left (`| head`): stop without a word, as Unix tools do, with
            # SIGPIPE's status; what is left to print goes nowhere.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            _exit_now(128 + signal.SIGPIPE)
        except Exception as e:  # noqa: BLE001  (only a stop or a full disk is reported here; the rest re-raise)
            if _stop_asked:
                _report_stop(_stop_asked[0])
            failed = out_of_space(e)
            if failed is None:  # a bug: its traceback, then out without the interpreter's teardown,
                traceback.print_exc()  # where ALE's bindings would report the envs still open as leaks
                _exit_now(1)
            _quiet_shutdown()
            where = f" to resume the run in {_run_in_progress}" if _run_in_progress else ""
            print(f"error: could not write {failed[0]}: {failed[1]}; free some space (or make the filesystem "
                  f"writable) and rerun the same command{where}: what was written whole is kept", file=sys.stderr)
            _exit_now(OUT_OF_SPACE_STATUS)
    app.run(main_with_user_errors, flags_parser=_parse_flags)


def _parse_flags(argv):
    """absl's flag parsing, except that help asked for (--help, --helpfull, --helpxml) and shown
    ends with status 0: absl ends it with 1, which a script or a shell's `&&` reads as a failure."""
    try:
        return flags.FLAGS(argv)
    except flags.Error:
        return app.parse_flags_with_usage(argv)  # the same error again: absl's message, status 1
    except SystemExit as stop:  # only absl's help flags leave the parse this way, after the help
        raise SystemExit(0 if stop.code == 1 else stop.code) from None
