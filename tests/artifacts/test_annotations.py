"""The annotation scan of the Rust core against a plain-Python oracle: generated
sources in Python, TypeScript, Go and Rust, with annotations in comments (found,
with their enclosing function), in strings and malformed (never found); and the
index's walk: .gitignore, hidden directories and scan paths."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from artifacts_fixture import copy_fixture
from repoctx import _core

LANGS = {
    # extension, function opener, closer, line comment, block comment, string statement, code statement
    "py": ("def {f}(x):", None, "# {c}", '""" {c} """', 's = "{c}"', "x = x + 1"),
    "ts": ("function {f}(x: number): number {{", "}}", "// {c}", "/* {c} */", 'const s = "{c}";', "x = x + 1;"),
    "go": ("func {f}(x int) int {{", "}}", "// {c}", "/* {c} */", 's := "{c}"', "x = x + 1"),
    "rs": ("fn {f}(x: u32) -> u32 {{", "}}", "// {c}", "/* {c} */", 'let s = "{c}";', "let y = x + 1;"),
}
KINDS = ["spec", "decision", "norm", "test"]

ids = st.builds(lambda p, n: f"{p}-{n}", st.sampled_from(["SPEC", "DEC", "NORM", "TASK"]),
                st.from_regex(r"[0-9]{1,3}(-[A-Z0-9]{1,3})?", fullmatch=True))
targets = st.builds(lambda i, tail: i + tail, ids,
                    st.sampled_from(["", ".token-refresh", "/login-success", ".x_1"]))
annotations = st.tuples(st.sampled_from(KINDS), targets)
# Text that looks like an annotation but is not one (no space, wrong case, unknown prefix, glued).
decoys = st.sampled_from(["{p}specs SPEC-1", "{p}spec: SPEC-1", "{p}spec spec-1", "{p}spec FOO-1", "{p}spec SPEC-1x",
                          "x{p}spec SPEC-2", "{p}Spec SPEC-3", "note"])


@st.composite
def sources(draw):
    """(extension, prefix, text, expected rows (line, kind, target, symbol))."""
    ext = draw(st.sampled_from(sorted(LANGS)))
    prefix = draw(st.sampled_from(["@", "contextia:"]))
    opener, closer, line_c, block_c, string_s, code_s = LANGS[ext]
    indent = "    " if ext == "py" else "\t" if ext == "go" else "  "
    lines: list[str] = []
    expected: list[tuple[int, str, str, str]] = []

    def comment(template: str, anns, symbol: str, pad: str) -> None:
        words = [f"{prefix}{k} {t}" for k, t in anns] + [draw(decoys).format(p=prefix)]
        draw(st.randoms()).shuffle(words)
        lines.append(pad + template.format(c=" ".join(words) + " end"))
        expected.extend((len(lines), k, t, symbol) for k, t in sorted(anns, key=lambda a: words.index(f"{prefix}{a[0]} {a[1]}")))

    for n in range(draw(st.integers(1, 4))):
        name = f"func_{n}"
        lead = draw(st.lists(annotations, max_size=2))
        if lead:  # a comment block right above the function belongs to it
            comment(line_c, lead, name, "")
        lines.append(opener.format(f=name))
        for _ in range(draw(st.integers(1, 5))):
            what = draw(st.sampled_from(["code", "comment", "block", "string"]))
            anns = draw(st.lists(annotations, min_size=1, max_size=2))
            if what == "code":
                lines.append(indent + code_s)
            elif what == "comment":
                comment(line_c, anns, name, indent)
            elif what == "block":
                comment(block_c, anns, name, indent)
            else:  # inside a string: never an annotation
                words = " ".join(f"{prefix}{k} {t}" for k, t in anns)
                lines.append(indent + string_s.format(c=words))
        lines.append(indent + ("return x" if ext == "py" else code_s))
        if closer:
            lines.append(closer.format())
        lines.append("")
    if draw(st.booleans()):  # at the top level, after a blank line: no symbol
        comment(line_c, draw(st.lists(annotations, min_size=1, max_size=2)), "", "")
    return ext, prefix, "\n".join(lines) + "\n", expected


@settings(max_examples=80, deadline=None)
@given(sources())
def test_the_core_finds_exactly_the_annotations_in_comments(source):
    ext, prefix, text, expected = source
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"m.{ext}"
        path.write_text(text)
        found = _core.annotate_file(str(path), f"src/m.{ext}", prefix)
    assert [(a.line, a.kind, a.target, a.symbol) for a in found] == expected, text
    assert all(a.path == f"src/m.{ext}" and a.symbol_kind == ("function" if a.symbol else "") for a in found)


def test_the_index_walks_what_git_would_keep(tmp_path):
    root = copy_fixture(tmp_path / "authkit")
    (root / ".cache").mkdir()
    (root / ".cache/x.py").write_text("# @spec SPEC-001 hidden\n")
    (root / "src/node_modules").mkdir()
    (root / "src/node_modules/dep.js").write_text("// @spec SPEC-001 vendored\n")
    for d in (root, root / "src"):  # old again: a stamp taken within a second of a change is never current
        os.utime(d, (1e9, 1e9))
    everything = _core.SourceIndex(str(root), "@", ["."])
    paths = {a.path for a in everything.annotations()}
    assert "build/generated.py" not in paths  # .gitignore
    assert not any(p.startswith((".cache/", "src/node_modules/", ".contextia/")) for p in paths)
    assert {"README.md", "src/auth/login.py", "tests/login_checks.py", "web/src/legacy.js"} <= paths
    scoped = _core.SourceIndex(str(root), "@", ["src", "tests/"])
    assert {a.path.split("/")[0] for a in scoped.annotations()} == {"src", "tests"}
    assert scoped.is_current()
    (root / "src/new.py").write_text("")
    assert not scoped.is_current()
    globs = _core.Globs(["src/auth/*", "src/**/*.rs", "nothing/*", "[", "web/"])
    assert globs.invalid == [3]
    assert everything.match_counts(globs) == [4, 1, 0, 0, 2]
    assert globs.matches("src/auth/login.py") == [0]
    assert everything.overlaps(_core.Globs(["src/*/login.py"]), globs) == [True, False, False, False, False]
