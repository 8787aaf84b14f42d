"""Task context is a function of the files alone (issue 29.4): a long-lived task index walked
through many states (files added, edited, removed, renamed; a name defined by more files than
the index keeps, then by fewer) answers at each state byte for byte as an index built fresh
from that state. File numbers are reused from a free list, so any choice made by number
(a Go import's five files, a directory's files, a name's files) would show here."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoctx import _core

GO_FILES = [f"svc/api/{c}.go" for c in "abcdefgh"]
PY_FILES = ["app/m.py", "app/n.py", "app/o.py", "lib/util.py", "lib/extra.py", "app/.hidden/p.py", "build/q.py"]
PATHS = GO_FILES + ["svc/db/main.go", "svc/web/x.go"] + PY_FILES
COMMON_NAME = "shared_helper"  # defined by up to 70 files of gen/: past the index's COMMON (64)


def text(path: str, variant: int) -> str:
    if path.endswith(".go"):
        package = path.split("/")[-2]
        imports = 'import "example.com/m/svc/api"\n\n' if package != "api" else ""
        return (f"package {package}\n\n{imports}// Handle orders and carts for the api, take {variant}.\n"
                f"func HandleOrder{variant}() {{}}\n")
    return (f"from lib.util import {COMMON_NAME}\n\n\ndef run_{variant}():\n"
            f"    \"\"\"Orders and carts, take {variant}.\"\"\"\n    return {COMMON_NAME}()\n")


path_ = st.sampled_from(PATHS)
op = st.one_of(
    st.tuples(st.just("write"), path_, st.integers(0, 3)),
    st.tuples(st.just("remove"), path_, st.just(0)),
    st.tuples(st.just("rename"), path_, st.integers(0, len(PATHS) - 1)),
    st.tuples(st.just("defined_by"), st.just(""), st.integers(55, 70)),
)

TASKS = [
    ("HandleOrder1 in the api should handle carts", []),
    (f"{COMMON_NAME} returns orders; fix run_2", ["svc/api"]),
    ("orders and carts for the api", ["app/m.py"]),
]


class Tree:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = 1_700_000_000 * 10**9  # every write gets its own mtime: a change is always seen

    def write(self, rel: str, body: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body)
        self.clock += 10**9
        os.utime(p, ns=(self.clock, self.clock))

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def apply(self, kind: str, rel: str, n: int) -> None:
        if kind == "write":
            self.write(rel, text(rel, n))
        elif kind == "remove":
            self.remove(rel)
        elif kind == "rename":
            src, dst = self.root / rel, self.root / PATHS[n]
            if src.exists() and src != dst:
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.replace(src, dst)
        else:
            for i in range(70):
                if i < n:
                    self.write(f"gen/g{i:02}.py", f"def {COMMON_NAME}():\n    return {i}\n")
                else:
                    self.remove(f"gen/g{i:02}.py")

    def scopes(self) -> list[str]:
        """The directories the index reads: the scopes' and the unscoped (hidden, `build`)."""
        table = _core.walk(str(self.root), [], 10, 0)
        return [r.scope for r in [*table.rows, *table.unscoped]]


def answers(index: _core.TaskIndex) -> list[str]:
    return [index.query(task, 2000, paths, ["history"], 10, "bytes4") for task, paths in TASKS]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=4, max_size=14))
def test_a_long_lived_index_answers_as_a_fresh_build_at_every_state(ops):
    with tempfile.TemporaryDirectory() as tmp:
        tree = Tree(Path(tmp))
        for i, p in enumerate(PATHS):
            tree.write(p, text(p, i % 4))
        scopes = tree.scopes()
        held = _core.TaskIndex(tmp, scopes, [])
        for kind, rel, n in ops:
            tree.apply(kind, rel, n)
            scopes = tree.scopes()
            held.update(scopes, scopes)
            fresh = _core.TaskIndex(tmp, scopes, [])
            assert held.file_count == fresh.file_count
            assert answers(held) == answers(fresh), (kind, rel, n)


def test_a_go_import_links_to_the_same_five_files_after_removals_and_additions(tmp_path):
    """The case issue 29 saw on a Go history: eight files in a package, the first ones by path
    removed and written again, so they come back under numbers freed by others."""
    tree = Tree(tmp_path)
    for i, p in enumerate(PATHS):
        tree.write(p, text(p, i % 4))
    held = _core.TaskIndex(str(tmp_path), tree.scopes(), [])
    answers(held)
    for p in GO_FILES[:4]:
        tree.remove(p)
    held.update(tree.scopes(), tree.scopes())
    answers(held)
    for p in reversed(GO_FILES[:4]):
        tree.write(p, text(p, 1))
    held.update(tree.scopes(), tree.scopes())
    fresh = _core.TaskIndex(str(tmp_path), tree.scopes(), [])
    assert answers(held) == answers(fresh)
