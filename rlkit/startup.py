"""What every rlkit process sets up when it imports rlkit, before TensorFlow loads: TensorFlow's
oneDNN kernels on, its start-up noise out of the user's terminal, and TensorFlow's, Keras's and
MinAtar's first imports made lighter. `rlkit/__init__.py` imports this module first; nothing else does.

These have to happen at import: each setting or import finder acts only if it is in place before
TensorFlow (or Keras) is first imported, whoever imports it.
"""

import gc
import importlib.abc
import importlib.util
import logging
import os
import sys

# TensorFlow leaves its oneDNN CPU kernels off on some x86 CPUs; on the 2-core machines rlkit is
# developed on they make convolution training ~1.6x faster (scripts/bench_ppo.py). This must be set
# before TensorFlow is imported; TF_ENABLE_ONEDNN_OPTS=0 in the environment still turns it off.
ONEDNN_ASKED = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


def onednn_enabled():
    """Whether the TensorFlow loaded runs oneDNN's kernels (decided once, at its import); None where
    this TensorFlow cannot say."""
    try:
        from tensorflow.python.util import _pywrap_util_port
        return bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        return None


def warn_if_tensorflow_came_first():
    """A script that imports TensorFlow before rlkit gets TensorFlow's own choice of kernels, which
    on CPUs without AVX-512 (AMD's) leaves oneDNN off: SimPLe's world-model step then ran 1.5x
    slower (docs/benchmarks.md), silently. One line says so, unless the user chose either way."""
    if "tensorflow" in sys.modules and ONEDNN_ASKED is None and onednn_enabled() is False:
        sys.stderr.write(
            "rlkit: TensorFlow was imported before rlkit, so its oneDNN kernels are off on this CPU "
            "(training up to 1.5x slower): import rlkit first, or export TF_ENABLE_ONEDNN_OPTS=1 "
            "(=0 keeps them off without this line).\n")


warn_if_tensorflow_came_first()

# RLKIT_TF_LOGS=1 shows everything TensorFlow's C++ side logs.
TF_LOGS = os.environ.get("RLKIT_TF_LOGS", "") not in ("", "0")


class _FirstImport(importlib.abc.MetaPathFinder):
    """Wraps the first import of module `NAME`, whoever makes it and whenever, in `load`; later
    imports find the module loaded. While it loads, the modules in `HIDDEN` (ones it imports only
    where installed) look absent, unless already imported; afterwards they import as usual.

    The finder stays in place until the module loads, not just until it is first looked up:
    TensorFlow looks Keras up (importlib.util.find_spec, for its module paths) before it imports
    it, and a finder gone at the lookup would miss the import.

    The garbage collector is off while the module loads, and the objects loaded are then frozen
    (gc.freeze: never scanned again): TensorFlow's import makes ~440K long-lived objects, and the
    full collections that scanned them took a third of its CPU time (3.95 s -> 2.6 s to import
    TensorFlow and Keras, this project's 2-core machines), and kept costing later."""

    NAME = None
    HIDDEN = ()

    def find_spec(self, fullname, path, target=None):
        if fullname != self.NAME:
            return None
        sys.meta_path.remove(self)  # the lookup below must not come back here
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            if self in sys.meta_path:
                sys.meta_path.remove(self)  # loaded once
            hidden = [name for name in self.HIDDEN if name not in sys.modules]
            for name in hidden:
                sys.modules[name] = None  # "import scipy" raises ImportError
            collecting = gc.isenabled()  # False inside another first import (Keras inside TensorFlow's)
            gc.disable()
            try:
                self.load(load, module)
            finally:
                for name in hidden:
                    del sys.modules[name]
                if collecting:
                    gc.freeze()
                    gc.enable()

        spec.loader.exec_module = exec_module
        return spec

    def load(self, load, module):
        load(module)


class _QuietTensorFlowImport(_FirstImport):
    """Silences TensorFlow's first import: rlkit's commands that need no TensorFlow (the hparams
    listing, collect, inspect, most mistakes) then start without paying for it.

    TensorFlow's C++ start-up lines (CUDA probing, oneDNN and CPU-feature notices) are written
    before its log level applies, so only the file descriptor can hold them back: stderr points
    at /dev/null while TensorFlow loads and probes its devices. Python errors still show: stderr
    is restored before any exception propagates."""

    NAME = "tensorflow"
    # TensorFlow's bundled legacy Keras imports scipy.sparse where installed (rliable brings it),
    # for sparse inputs rlkit never gives it: 0.3 s of every start.
    HIDDEN = ("scipy",)

    def load(self, load, module):
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        sys.stderr.flush()
        os.dup2(devnull, 2)
        try:
            load(module)
            module.config.list_physical_devices()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(devnull)


if not TF_LOGS:
    # TensorFlow's C++ info and warning lines (checkpoint sharding; a failed op's
    # "OP_REQUIRES failed" and "Local rendezvous is aborting", which repeat the Python error a
    # command turns into its one line); its errors still show.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if "tensorflow" not in sys.modules:
        sys.meta_path.insert(0, _QuietTensorFlowImport())


class _LeanKerasImport(_FirstImport):
    """Keras imports pandas and matplotlib.pyplot at its own import, where they are installed (they
    are with rlkit's results and Ray extras), for DataFrame inputs and an image-gallery helper
    rlkit never uses: about 1.4 s of every command's start on this project's 2-core machines
    (scripts/bench_startup.py). While Keras loads they look absent, as Keras allows."""

    NAME = "keras"
    HIDDEN = ("pandas", "matplotlib")


if "keras" not in sys.modules:
    sys.meta_path.insert(0, _LeanKerasImport())


class _LeanMinAtarImport(_FirstImport):
    """MinAtar imports matplotlib's pyplot and seaborn (and through them scipy and pandas) at its
    import, for a display window rlkit never opens (rlkit.video draws MinAtar's frames): about
    4 s of every MinAtar command's start, a finished run's rerun included, on this project's
    2-core machines. While MinAtar loads they look absent, as MinAtar allows; the line it then
    logs (that it cannot render) is held back: rlkit draws MinAtar's frames itself."""

    NAME = "minatar"
    HIDDEN = ("matplotlib", "seaborn")

    def load(self, load, module):
        def not_the_render_notice(record):
            return "Will not be able to render" not in record.getMessage()

        root = logging.getLogger()  # MinAtar logs it through the root logger
        root.addFilter(not_the_render_notice)
        try:
            load(module)
        finally:
            root.removeFilter(not_the_render_notice)


if "minatar" not in sys.modules:
    sys.meta_path.insert(0, _LeanMinAtarImport())
