"""The package's layers, read from its source: views over the registry over the surfaces
over base/ and formats/, with no import circle, counting imports made inside functions too
(the hidden circle of a registry loading modules that import it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "repoctx"
SURFACES = ("scopes", "caches", "artifacts", "project", "control", "tasks")


def _module_name(path: Path) -> str:
    return ".".join(("repoctx", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module imported, at module level) for every import of repoctx or of anything in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.append((full if full in MODULES else node.module, id(node) in top))
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
    return found


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: {m for m, _ in _imports(path) if m in MODULES} for name, path in MODULES.items()}


def _layer(module: str) -> str:
    """The package (or top-level module) a module belongs to: repoctx.scopes.read -> scopes."""
    return module.split(".")[1] if "." in module else module


def test_no_import_circle_even_through_imports_inside_functions():
    color: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        color[m] = 1
        for d in sorted(GRAPH[m]):
            if color.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [m, d]))
            elif d not in color:
                visit(d, [*stack, m])
        color[m] = 2

    for m in sorted(GRAPH):
        if m not in color:
            visit(m, [])
    assert not cycles


def test_the_registry_vocabulary_and_the_error_base_are_leaves():
    assert GRAPH["repoctx.base.errors"] == set()
    assert GRAPH["repoctx.base.command"] == {"repoctx.base.errors"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) in ("base", "formats")))
def test_base_and_formats_import_no_surface_registry_or_view(module):
    assert {_layer(d) for d in GRAPH[module]} <= {"base", "formats", "_core", "repoctx"}, GRAPH[module]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) in SURFACES))
def test_a_surface_imports_only_itself_base_and_formats(module):
    own = _layer(module)
    assert {_layer(d) for d in GRAPH[module]} <= {own, "base", "formats", "_core", "repoctx"}, GRAPH[module]


def test_only_the_catalog_names_the_surfaces_modules():
    # The views and the allowlist reach the surfaces through the catalog, never by import.
    for module in MODULES:
        if _layer(module) in ("views", "registry") and module != "repoctx.registry.catalog":
            assert not {d for d in GRAPH[module] if _layer(d) in SURFACES}, (module, GRAPH[module])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_nothing_private_of_the_sdk_and_nothing_posix_only_at_module_level(module):
    for imported, at_top in _imports(MODULES[module]):
        assert not any(part.startswith("_") and part != "__future__" for part in imported.split(".")[1:]
                       if imported.startswith("mcp")), imported
        assert not (at_top and imported in ("fcntl", "termios", "pwd", "grp", "resource")), imported


CORE = PACKAGE.parents[1] / "rust"
# A path of the crate (`libc::`, `rustix::`, `std::os::`, `use libc`, `::std::os`), in code or in a comment's
# example alike: a word inside a longer name (`rustix_like`, `my_libc`) is not one.
_OS_CRATE = re.compile(r"(?<![\w:])(?:::)?(?:libc|rustix|std\s*::\s*os)\b(?=\s*(?:::|;|\}|,|\s+as\b))")


def _os_names(text: str) -> list[str]:
    return [m.group(0) for m in _OS_CRATE.finditer(text)]


def test_only_the_core_tree_names_the_os():
    """Every OS call of the core is in rust/tree/ (tree/os.rs holds the differences): no other
    module names libc, rustix or std::os, so the core builds for every desktop from one place."""
    assert (CORE / "tree" / "os.rs").is_file()
    outside = {
        str(p.relative_to(CORE)): _os_names(p.read_text(encoding="utf-8"))
        for p in sorted(CORE.rglob("*.rs"))
        if CORE / "tree" not in p.parents
    }
    assert {path: names for path, names in outside.items() if names} == {}
    # ... and the check sees what it looks for.
    assert _os_names("use libc::c_int;\nlet s = std::os::unix::ffi::OsStrExt;\nrustix::fs::open(p)") == [
        "libc", "std::os", "rustix"]
    assert _os_names("use ::std::os::fd; use libc;") == ["::std::os", "libc"]
    assert _os_names("my_libc::x; rustix_like::y; \"libc\" text; crate::tree::os::Key") == []


# --- the core's modules: `use crate::…`, `super::…` and `crate::x::` paths, as Python's imports above ---

# A comment, a string (raw, byte) or a character literal: nothing in one is a path of the crate.
_RUST_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|b?r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?\'(?:\\.|[^\\\'\n])\'', re.S)
_TEST_MODULE = re.compile(r"#\[cfg\([^\]]*\btest\b[^\]]*\)\]\s*(?:pub\s+)?mod\s+\w+\s*\{")
_INLINE_MODULE = re.compile(r"\bmod\s+\w+\s*\{")
_USE = re.compile(r"\buse\s+([^;]+);")
_PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:\s*::\s*\w+)+)")


def _rust_module(path: Path) -> str:
    """tree/walk.rs -> tree::walk, tree/mod.rs -> tree, lib.rs -> the crate ("")."""
    parts = path.relative_to(CORE).with_suffix("").parts
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(parts)


def _block_end(text: str, open_brace: int) -> int:
    depth = 0
    for i in range(open_brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return len(text)


def _use_paths(tree: str) -> list[str]:
    """The paths a use tree names: `a::{b, c::{d, e as f}}` -> a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [re.sub(r"as\w+$", "", tree.split(" as ")[0])] if tree else []
    head, body = tree[: tree.index("{")], tree[tree.index("{") + 1: tree.rindex("}")]
    items, depth, start = [], 0, 0
    for i, c in enumerate(body + ","):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    return [p for item in items if item for p in _use_paths(head + item)]


def _rust_imports(own: str, source: str, modules: set[str]) -> set[str]:
    """The modules of the crate that module `own` (its source given) uses, its tests left out
    (they may import anything)."""
    text = _RUST_NOISE.sub(" ", source)
    while m := _TEST_MODULE.search(text):
        text = text[: m.start()] + text[_block_end(text, m.end() - 1):]
    inline = [(m.start(), _block_end(text, m.end() - 1)) for m in _INLINE_MODULE.finditer(text)]
    found = set()
    paths = [(m.start(), p) for m in _USE.finditer(text) for p in _use_paths(m.group(1))]
    paths += [(m.start(), re.sub(r"\s+", "", m.group(1))) for m in _PATH.finditer(text)]
    for at, p in paths:
        segments = p.split("::")
        if segments[0] == "crate":
            base, segments = [], segments[1:]
        elif segments[0] in ("super", "self"):
            base = own.split("::") if own else []
            nested = sum(start < at < end for start, end in inline)  # `super` in `mod x {}` is this file
            while segments and segments[0] in ("super", "self"):
                if segments.pop(0) == "super":
                    nested, base = (nested - 1, base) if nested else (0, base[:-1])
        elif "::".join(filter(None, (own, segments[0]))) in modules:  # a child named bare: `use imports::X`
            base = own.split("::") if own else []
        else:
            continue
        full = [*base, *segments]
        target = next(("::".join(full[:n]) for n in range(len(full), -1, -1) if "::".join(full[:n]) in modules), None)
        if target is not None and target != own:
            found.add(target)
    return found


RUST_FILES = {_rust_module(p): p for p in sorted(CORE.rglob("*.rs")) if p.name != "testing.rs"}
RUST_GRAPH = {m: _rust_imports(m, p.read_text(encoding="utf-8"), set(RUST_FILES)) for m, p in RUST_FILES.items()}
# Modules that import nothing else of the crate: the vocabulary every other module may use.
RUST_LEAVES = ("tree::paths", "tree::names", "tree::os", "tree::watch::event", "formats::jsonrpc", "formats::gomod",
               "caches::tokens", "artifacts::bpe")


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's), each a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for d in sorted(graph[m]):
            if d not in index:
                visit(d)
                low[m] = min(low[m], low[d])
            elif d in stack:
                low[m] = min(low[m], index[d])
        if low[m] == index[m]:
            component = set()
            while True:
                d = stack.pop()
                component.add(d)
                if d == m:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for m in sorted(graph):
        if m not in index:
            visit(m)
    return found


def test_the_core_has_no_import_circle():
    assert [sorted(c) for c in _circles(RUST_GRAPH)] == []


@pytest.mark.parametrize("module", RUST_LEAVES)
def test_a_leaf_of_the_core_imports_nothing_of_the_crate(module):
    assert RUST_GRAPH[module] == set()


def test_the_core_import_reader_sees_every_way_of_naming_a_module():
    modules = {"", "tree", "tree::os", "tree::walk", "tree::git", "tasks", "tasks::index", "lang", "lang::imports"}
    assert _use_paths("crate::tree::{os::{self, Kind}, walk as w}") == ["crate::tree::os::self", "crate::tree::os::Kind",
                                                                       "crate::tree::walk"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]

    def imports(module: str, text: str) -> set[str]:
        return _rust_imports(module, text, modules)

    assert imports("tree::git", "use crate::tree::os::{self, Key};\nfn f() { crate::tree::walk::x(); }") == {
        "tree::os", "tree::walk"}
    assert imports("tree::git", "use super::walk::Row; // crate::tasks::index\nconst S: &str = \"crate::lang\";") == {
        "tree::walk"}
    assert imports("tree::os", "mod linux { use super::Kind; }\n#[cfg(test)]\nmod tests { use crate::tasks; }") == set()
    assert imports("lang", "use imports::Grammar;\nuse std::fmt;") == {"lang::imports"}
    assert imports("tasks::index", "use super::super::tree::walk;") == {"tree::walk"}
