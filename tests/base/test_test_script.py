"""scripts/test, the README's test command, finishes and says what it does: no cargo step is
silent (`--quiet` once hid 11 minutes of compiling), clippy compiles the tests with warnings as
errors (one build for both), and the type check fails a POSIX-only call on a path Windows or macOS
reaches."""

from __future__ import annotations

import os
import re
import shutil
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
    steps = _cargo_steps("scripts/test") + _cargo_steps("scripts/dev-setup") + _cargo_steps("scripts/cross-check")
    assert any("cargo clippy" in s for s in steps) and any("cargo test" in s for s in steps)
    assert [s for s in steps if re.search(r"\s(--quiet|-q)\b", s)] == []


# A library and its unit test, each with a lint that fails or not.
CRATE = """pub fn count(xs: LIB) -> usize {
    xs.len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts() {
        assert_eq!(super::count(ARG), 2);
        TEST
    }
}
"""


@pytest.mark.parametrize("lib, arg, test, lint", [
    ("&Vec<u32>", "&vec![1, 2]", "", "clippy::ptr-arg"),  # a lint of the library itself
    ("&[u32]", "&[1, 2]", "return;", "clippy::needless-return"),  # a lint of its test build only
    ("&[u32]", "&[1, 2]", "", None),  # clean: the test runs
])
def test_cargo_test_is_compiled_by_clippy_with_warnings_as_errors(tmp_path, lib, arg, test, lint):
    """The host's clippy step is scripts/test's own `cargo test` line, run on a small crate."""
    if not (shutil.which("cargo") and shutil.which("clippy-driver")):
        pytest.skip("cargo and clippy are not installed")
    lines = [c for c in _commands("scripts/test") if c.startswith("clippy_driver=") or re.search(r"\scargo test\b", c)]
    assert len(lines) == 2, lines
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n')
    (tmp_path / "src/lib.rs").write_text(CRATE.replace("LIB", lib).replace("ARG", arg).replace("TEST", test))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO_", "RUSTC", "RUSTFLAGS", "CLIPPY"))}
    proc = subprocess.run(["bash", "-c", "set -e\n" + "\n".join(lines)], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "CARGO_TARGET_DIR": str(tmp_path / "target")}, timeout=600)
    if lint:
        assert proc.returncode != 0 and f"`-D {lint}` implied by `-D warnings`" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0 and "test tests::counts ... ok" in proc.stdout, proc.stdout + proc.stderr


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
