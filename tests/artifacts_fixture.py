"""The Contextia fixture project (tests/fixtures/contextia): thirty artifacts, one
malformed spec and one task whose YAML does not parse, session logs, and annotated
sources in Python, Rust, TypeScript, JavaScript and Go. Tests work on a copy."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "contextia"


def copy_fixture(dest: Path, age_s: float = 3600) -> Path:
    """A copy of the fixture at `dest`, plus an ignored `build/` the repository cannot hold,
    every mtime set `age_s` seconds back (so no stamp is racy and edits show as changes)."""
    shutil.copytree(FIXTURE, dest)
    (dest / "build").mkdir()
    (dest / "build/generated.py").write_text("# @spec SPEC-001 generated; build/ is ignored\n")
    past = time.time() - age_s
    for directory, _dirs, files in os.walk(dest):
        for name in files:
            os.utime(os.path.join(directory, name), (past, past))
        os.utime(directory, (past, past))
    return dest
