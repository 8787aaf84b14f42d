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
