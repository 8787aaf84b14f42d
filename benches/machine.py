"""Where and with what a benchmark ran, for every report of benches/ (the harness's and the
quality bench's), so that two reports can be told apart."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from pathlib import Path


def machine() -> dict:
    """Where and with what the figures were measured: enough to tell two reports apart."""
    from importlib import metadata

    def out(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            return ""

    from repoctx import __version__, _core

    build = _core.build_info()
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_avg": os.getloadavg()[0],
        "platform": platform.platform(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "repoctx": __version__,
        # debug_assertions of the compiled core: a debug build is several times slower
        "core_build": build.profile,
        "mcp": metadata.version("mcp"),
        "msgspec": metadata.version("msgspec"),
        "rustc": out("rustc", "--version") or "unknown",
        "commit": out("git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"),
        "git": out("git", "--version"),
    }
