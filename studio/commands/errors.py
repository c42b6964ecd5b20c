"""The one-line errors a command exits with."""

from __future__ import annotations

import argparse
from typing import NoReturn

from studio.core.base.messages import shortened


class CliError(Exception):
    """A one-line reason to exit non-zero (``code``)."""

    code = 1


class UsageError(CliError):
    """A model or arguments that cannot be used: exit code 2."""

    code = 2


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, pointing to the command's help,
    with exit code 2 (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"studio: error: {shortened(message, 200)} (see {self.prog} --help)\n")
