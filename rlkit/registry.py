"""A registry of named builders: the one mechanism behind hparam sets and models."""

from rlkit.errors import UserError, did_you_mean


import importlib


class Registry:
    """Functions registered under their own name; duplicate names are an error.

    `modules`: the modules whose import registers the builders rlkit ships, imported at the
    first lookup rather than up front: the learners and networks import TensorFlow (about 5 s),
    which a command that stops at a mistake in its flags never needs."""

    def __init__(self, kind, listing_hint=None, modules=()):
        self.kind = kind                  # "hparams set", "model": for error messages
        self.listing_hint = listing_hint  # how a user lists the names; None: the error lists them
        self._builders = {}
        self._modules = list(modules)

    def _import_modules(self):
        while self._modules:
            importlib.import_module(self._modules.pop(0))

    def register(self, fn, name=None):
        """Decorator: registers `fn` under `name`, by default `fn.__name__`."""
        name = name or fn.__name__
        if name in self._builders:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._builders[name] = fn
        return fn

    def names(self):
        self._import_modules()
        return sorted(self._builders)

    def __contains__(self, name):
        self._import_modules()
        return name in self._builders

    def describe(self, name):
        """The first line of the docstring of what `name` registers."""
        doc = (self.get(name).__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    def get(self, name):
        """The function registered as `name`; an unknown name is refused with the closest ones."""
        self._import_modules()
        if name not in self._builders:
            hint = self.listing_hint or "registered: " + ", ".join(self.names())
            raise UserError(f"unknown {self.kind} {name!r}{did_you_mean(name, self._builders)} ({hint})")
        return self._builders[name]
