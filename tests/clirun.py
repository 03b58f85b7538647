"""Run the `pyramids` command in this process, as the tests do (shared helper)."""

from __future__ import annotations

import io
import sys

from solver.cli import main


def run(capsys, *argv, stdin: str | None = None):
    """``(exit code, stdout, stderr)`` of ``pyramids *argv`` with ``stdin`` as standard input;
    a traceback on standard error fails the calling test."""
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(argv))
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err
