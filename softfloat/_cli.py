"""What the command lines share: a bad argument is one line on stderr and exit
status 2 (no usage dump, no traceback); a closed pipe (``... | head``) ends the
command quietly; ``--help`` shows each option's default."""
from __future__ import annotations

import argparse
import functools
import os
import sys


class UsageError(Exception):
    """A bad argument found after parsing (exit status 2, one line)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``prog: error: message (see --help)``) and
    the defaults shown in ``--help``."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kw)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as written; ``(default: X)`` after every option that has a
    default and does not state it already."""

    def _get_help_string(self, action):
        h = action.help or ""
        if "%(default)" in h or "default" in h.lower() or action.default is None \
                or action.default is False or action.default is argparse.SUPPRESS \
                or not action.option_strings:
            return h
        return h + " (default: %(default)s)"


def command(prog: str):
    """Decorate a ``main(argv) -> int``: UsageError -> one line, exit 2; a closed
    stdout -> quiet exit 0 (the reader had what it wanted)."""
    def wrap(main):
        @functools.wraps(main)
        def run(argv=None):
            try:
                rc = main(argv)
                sys.stdout.flush()        # a closed pipe shows here, not at exit
                return rc
            except UsageError as e:
                print(f"{prog}: error: {e}", file=sys.stderr)
                return 2
            except BrokenPipeError:
                _quiet_stdout()
                return 0
        return run
    return wrap


def _quiet_stdout():
    """After EPIPE: point stdout at /dev/null so that the interpreter's final
    flush does not raise again (the recipe in Python's signal documentation)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
