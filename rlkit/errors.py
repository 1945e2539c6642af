"""The one exception type for mistakes a user can fix.

Entry points print a `UserError` as a single line and exit non-zero; anything else is a bug
and keeps its traceback.
"""


class UserError(Exception):
    """A mistake in what the user asked for (a name, a value, a path), with what to do about it."""
