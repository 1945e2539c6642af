"""The one exception type for mistakes a user can fix.

Entry points print a `UserError` as a single line and exit non-zero; anything else is a bug
and keeps its traceback.
"""

import difflib


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
