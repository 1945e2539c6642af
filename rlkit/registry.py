"""A registry of named builders: the one mechanism behind hparam sets and models."""

from rlkit.errors import UserError, did_you_mean


class Registry:
    """Functions registered under their own name; duplicate names are an error."""

    def __init__(self, kind, listing_hint=None):
        self.kind = kind                  # "hparams set", "model": for error messages
        self.listing_hint = listing_hint  # how a user lists the names; None: the error lists them
        self._builders = {}

    def register(self, fn):
        """Decorator: registers `fn` under `fn.__name__`."""
        name = fn.__name__
        if name in self._builders:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._builders[name] = fn
        return fn

    def names(self):
        return sorted(self._builders)

    def __contains__(self, name):
        return name in self._builders

    def get(self, name):
        """The function registered as `name`; an unknown name is refused with the closest ones."""
        if name not in self._builders:
            hint = self.listing_hint or "registered: " + ", ".join(self.names())
            raise UserError(f"unknown {self.kind} {name!r}{did_you_mean(name, self._builders)} ({hint})")
        return self._builders[name]
