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


def subprocess_run(args, env_extra=None):
    """``pyramids *args`` in a child process (``subprocess.CompletedProcess``, text output),
    with ``env_extra`` in its environment and without an inherited ``PYRAMIDS_FAULT``: for the
    fault tests, whose child processes kill themselves."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYRAMIDS_FAULT"}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600, stdin=subprocess.DEVNULL)
