"""The one-line errors a command exits with."""

from __future__ import annotations


class CliError(Exception):
    """A one-line reason to exit non-zero (``code``)."""

    code = 1


class UsageError(CliError):
    """A model or arguments that cannot be used: exit code 2."""

    code = 2
