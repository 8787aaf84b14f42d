"""The absolute command of this repoctx, for what a client or a hook is told to run.

A client starts its servers with its own PATH and working directory (a GUI app sees no shell
PATH at all), so a registration names this very installation by absolute path: the `repoctx`
script that is running, else this Python with `-m repoctx`.
"""

from __future__ import annotations

import os
import subprocess
import sys

from repoctx import __version__

START_TIMEOUT_S = 30


def command() -> list[str]:
    """The words that start this repoctx from anywhere."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script).removesuffix(".exe") == "repoctx" and os.path.isfile(script):
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "repoctx"]


def why_it_fails(words: list[str]) -> str | None:
    """None when `words --version` answers this version with PATH emptied (as a client with
    none would start it); else what went wrong."""
    env = {k: v for k, v in os.environ.items() if k != "PATH"} | {"PATH": ""}
    try:
        done = subprocess.run([*words, "--version"], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=START_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{words[0]} does not start ({exc})"
    said = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or said != f"repoctx {__version__}":
        return f"{' '.join(words)} --version answered {said or done.stderr.decode(errors='replace').strip()!r}"
    return None
