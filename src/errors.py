"""Exceptions that reach the user as one line of text.

Every error a user can cause (a bad config value, a missing or corrupted data file) is raised as a
subclass of :class:`UserError`; ``python -m src.run`` prints its message on one line and exits with a
non-zero status instead of showing a traceback.
"""


class UserError(Exception):
    """An error caused by the user's input, reported as one line without a traceback."""


class ConfigError(UserError, ValueError):
    """A parameter has a bad value; the message names the parameter and the value."""


class DataError(UserError):
    """A data file is missing, unreachable or fails its hash check; the message says what to do."""


class StepFailed(Exception):
    """A step of a command (a pool's cells, a paper's figures or report) failed; the message is one line,
    ``status`` the exit status to return."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message on one short line: a user error's own text, any other prefixed with its type."""
    text = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
