"""scripts/test, the README's test command, finishes and says what it does: no cargo step is
silent (`--quiet` once hid 11 minutes of compiling), and the type check fails a POSIX-only call on a path Windows or macOS reaches."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]


def _commands(script: str) -> list[str]:
    """The script's command lines: comments dropped, continued lines joined."""
    text = re.sub(r"\\\n\s*", " ", (CHECKOUT / script).read_text())
    return [line.split(" #")[0].strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _cargo_steps(script: str) -> list[str]:
    return [c for c in _commands(script) if re.search(r"(^|[\s/])(cargo|maturin)\s", c)]


def test_no_cargo_step_is_quiet():
    steps = _cargo_steps("scripts/test") + _cargo_steps("scripts/dev-setup")
    assert any("cargo clippy" in s for s in steps) and any("cargo test" in s for s in steps)
    assert [s for s in steps if re.search(r"\s(--quiet|-q)\b", s)] == []


def test_the_type_check_covers_three_platforms():
    mypy = next(c for c in _commands("scripts/test") if c.startswith("for platform in"))
    assert set(mypy.split(";")[0].split()[3:]) == {"linux", "darwin", "win32"}


# Each line a call; the lines the check must fail for each platform.
PROBE = """import fcntl, os, signal, sys
fcntl.flock(0, fcntl.LOCK_EX)
os.open("x", os.O_RDONLY | os.O_NOFOLLOW)
os.kill(1, signal.SIGKILL)
if sys.platform != "win32":
    os.fchmod(0, 0o600)
"""
FAILS = {"win32": {2, 3, 4}, "darwin": set(), "linux": set()}


@pytest.mark.parametrize("platform", sorted(FAILS))
def test_the_platform_check_fails_a_posix_only_call(tmp_path, platform):
    pytest.importorskip("mypy", reason="mypy is a test extra (pip install -e .[test])")
    (tmp_path / "probe.py").write_text(PROBE)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(CHECKOUT / "pyproject.toml"),
                           "--platform", platform, "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "probe.py")],
                          capture_output=True, text=True, timeout=300)
    assert {int(n) for n in re.findall(r"probe\.py:(\d+): error", proc.stdout)} == FAILS[platform], proc.stdout
