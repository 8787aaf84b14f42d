"""Deriving `.repoctx/project.yaml` from the repository.

Stack, runtime and package manager come from manifests and lockfiles
(Python, Rust, Node, Go). Modules are workspace members (Cargo, npm/pnpm,
go.work), Python packages, and top-level source directories (container
directories such as `src/` or `packages/` are split into their children);
the root itself is a module only when it holds source files of its own. The
Rust core walks each module once for its key files and imports; module
dependencies are the imports that name another module.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass, field

from repoctx import _core
from repoctx.base import fs
from repoctx.base import manifests as mf
from repoctx.base.workspace import Workspace
from repoctx.formats import project_file as pf

# Directories whose children are the modules (`src/auth`, `packages/ui`, `internal/db`).
CONTAINERS = {
    "src", "lib", "libs", "app", "apps", "packages", "crates", "services", "internal", "pkg",
    "cmd", "modules", "components", "python",
}
PYTHON_BASES = ("", "src", "python", "lib")
SKIP = set(_core.SKIP_DIRS)

# The programming language of each extension, from the core's one table (docs/languages.md).
EXTENSION_LANGUAGES = {k.key: k.language for k in _core.file_kinds() if k.code}
# Well-known dependencies worth naming in the stack, by (ecosystem, name as mf.norm spells it).
FRAMEWORKS = {
    ("python", "django"): "Django", ("python", "flask"): "Flask", ("python", "fastapi"): "FastAPI",
    ("python", "starlette"): "Starlette", ("js", "react"): "React", ("js", "next"): "Next.js",
    ("js", "vue"): "Vue", ("js", "svelte"): "Svelte", ("js", "@angular/core"): "Angular",
    ("js", "express"): "Express", ("js", "@nestjs/core"): "NestJS", ("js", "fastify"): "Fastify",
    ("rust", "tokio"): "Tokio", ("rust", "axum"): "Axum", ("rust", "actix_web"): "Actix Web",
    ("rust", "pyo3"): "PyO3", ("go", "github.com/gin-gonic/gin"): "Gin",
    ("go", "github.com/labstack/echo/v4"): "Echo",
}


def _framework_deps(m: mf.Manifests) -> list[tuple[str, str]]:
    """(ecosystem, normalised name) of the dependencies that may name a framework: what the
    code uses, and for npm also dev and peer dependencies (a component library's framework)."""
    picked: list[tuple[str, mf.Dependency]] = []
    if m.python:
        picked += [("python", d) for d in m.python.dependencies if d.kind == "runtime"]
    if m.js:
        picked += [("js", d) for kind in ("runtime", "dev", "peer") for d in m.js.dependencies if d.kind == kind]
    if m.rust:
        picked += [("rust", d) for d in m.rust.dependencies if d.kind == "runtime"]
    if m.go:
        picked += [("go", d) for d in m.go.dependencies if d.kind == "runtime"]
    return [(eco, mf.norm(eco, d.name)) for eco, d in picked if not d.local]


def _languages(m: mf.Manifests) -> list[str]:
    out = []
    if m.python:
        out.append("Python")
    if m.js:
        if any(d.name == "typescript" for d in m.js.dependencies) or "tsconfig.json" in m.files:
            out.append("TypeScript")
        out.append("Node.js")
    if m.rust and m.rust.package:
        out.append("Rust")
    if m.go:
        out.append("Go")
    return out


def _head(path: str, n: int) -> str | None:
    """The first `n` bytes of a file as text, through the confined layer, or None."""
    try:
        return fs.read_head(*fs.split(path), n).decode("utf-8", "replace")
    except OSError:
        return None


# --- modules ---------------------------------------------------------------


@dataclass
class Candidate:
    name: str
    path: str  # relative with `/`, "" for the root
    declared: bool  # a workspace member: kept even without source files
    keys: dict[str, list[str]] = field(default_factory=dict)  # how other modules import it


def _is_plain_dir(root: str, rel: str) -> bool:
    abs_path = os.path.join(root, rel)
    name = os.path.basename(rel)
    return (
        bool(name) and not name.startswith(".") and name not in SKIP
        and os.path.isdir(abs_path) and not os.path.islink(abs_path)
    )


def _children(root: str, rel: str) -> list[str]:
    try:
        names = sorted(os.listdir(os.path.join(root, rel)))
    except OSError:
        return []
    return [c for c in (f"{rel}/{n}" if rel else n for n in names) if _is_plain_dir(root, c)]


# Bounds of expanding workspace globs (`packages/**`), all patterns of a scan together: the
# directories listed, and how deep `**` goes.
MAX_GLOB_DIRS = 10_000
MAX_GLOB_DEPTH = 32


def _expand(ws: Workspace, patterns: list, marker: str, budget: list[int]) -> list[str]:
    """Workspace member globs as relative directories holding `marker`, confined to the root:
    a pattern with `..` or an absolute one names nothing, and the tree is listed through the
    confined layer, never through a link, within `budget` directories."""
    found: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str) or pattern.startswith(("!", "/")) or "\x00" in pattern:
            continue
        parts = [p for p in pattern.replace("\\", "/").split("/") if p not in ("", ".")]
        if ".." in parts or re.match(r"[A-Za-z]:", pattern):
            continue
        for rel in _glob(ws.root, parts, budget):
            if rel not in found and fs.is_file(ws.root, f"{rel}/{marker}" if rel else marker):
                found.append(rel)
    return found


def _glob(root: str, parts: list[str], budget: list[int]) -> list[str]:
    """The plain directories (no link, hidden or skipped name) the components match, as glob's
    recursive match does, without recursion."""
    level = [""]
    for part in parts:
        nxt: list[str] = []
        if part == "**":  # the directory itself and every plain directory below it
            stack = [(d, 0) for d in level]
            while stack:
                d, depth = stack.pop()
                nxt.append(d)
                if depth < MAX_GLOB_DEPTH:
                    stack += [(c, depth + 1) for c in _plain_children(root, d, budget)]
        elif glob.has_magic(part):
            nxt = [c for d in level for c in _plain_children(root, d, budget)
                   if fnmatch.fnmatchcase(c.rsplit("/", 1)[-1], part)]
        else:
            nxt = [c for c in (f"{d}/{part}" if d else part for d in level) if _is_plain_dir(root, c)]
        level = list(dict.fromkeys(nxt))
    return sorted(level)


def _plain_children(root: str, rel: str, budget: list[int]) -> list[str]:
    if budget[0] <= 0:
        return []
    budget[0] -= 1
    try:
        entries = fs.scandir(root, rel or ".")
    except OSError:
        return []
    names = sorted(e.name for e in entries if e.kind == "d" and not e.name.startswith(".") and e.name not in SKIP)
    return [f"{rel}/{n}" if rel else n for n in names]


def _members(ws: Workspace, root_m: mf.Manifests) -> list[tuple[str, str]]:
    """(relative dir, kind) of declared workspace members."""
    members: list[tuple[str, str]] = []
    budget = [MAX_GLOB_DIRS]
    if root_m.rust:
        excluded = set(_expand(ws, list(root_m.rust.exclude), "Cargo.toml", budget))
        members += [(d, "cargo") for d in _expand(ws, list(root_m.rust.members), "Cargo.toml", budget) if d not in excluded]
    patterns = [*(root_m.js.workspaces if root_m.js else ()), *root_m.pnpm_packages]
    members += [(d, "npm") for d in _expand(ws, patterns, "package.json", budget)]
    members += [(d, "go") for d in _expand(ws, list(root_m.go_work), "go.mod", budget)]
    seen: set[str] = set()
    return [(d, k) for d, k in members if d and not (d in seen or seen.add(d))]


def _python_packages(root: str) -> list[str]:
    found = []
    for base in PYTHON_BASES:
        if base and not _is_plain_dir(root, base):
            continue
        for child in _children(root, base):
            if os.path.isfile(os.path.join(root, child, "__init__.py")):
                found.append(child)
    return found


def _inside(path: str, parent: str) -> bool:
    return parent == "" or path == parent or path.startswith(parent + "/")


def candidates(ws: Workspace, reader: mf.Reader) -> list[Candidate]:
    """Every directory that may be a module, before the scan tells which hold source."""
    root_m = reader.at("")
    members = _members(ws, root_m)
    paths: dict[str, bool] = {d: True for d, _ in members}  # path -> declared
    for p in _python_packages(ws.root):
        if not any(_inside(p, m) for m in paths):
            paths[p] = False
    taken = list(paths)
    for top in _children(ws.root, ""):
        if top in taken or any(_inside(top, m) for m in taken):
            continue
        paths[top] = False  # for its own files when members or children sit below it
        if os.path.basename(top) in CONTAINERS:
            for child in _children(ws.root, top):
                if child not in taken:
                    paths[child] = False
    paths[""] = False
    ordered = sorted(paths, key=lambda p: (p != "", p))
    names: dict[str, str] = {}
    used: set[str] = set()
    for path in [*ordered[1:], ""]:  # the root names itself last: a package may share the project's name
        name = _module_name(path, reader.at(path), root_m, ws.root)
        if name in used:
            name = path or "root"
        used.add(name)
        names[path] = name
    return [Candidate(names[p], p, paths[p]) for p in ordered]


def _module_name(path: str, m: mf.Manifests, root_m: mf.Manifests, root: str) -> str:
    if not path:
        return root_m.name or os.path.basename(root)
    declared = (m.js and m.js.name) or (m.rust and m.rust.name)
    if declared:
        return declared.rsplit("/", 1)[-1]  # "@acme/ui" -> "ui"
    return os.path.basename(path)


def _docstring(path: str) -> str:
    head = _head(path, 4096)
    if head is None:
        return ""
    m = re.match(r'\s*(?:#[^\n]*\n\s*)*[rRuU]?("""|\'\'\')(.*?)(\1|$)', head, re.S)
    if not m:
        return ""
    lines = [ln.strip() for ln in m.group(2).strip().splitlines()]
    first = []
    for ln in lines:  # the first paragraph, joined
        if not ln:
            break
        first.append(ln)
    return " ".join(first)


def _readme_line(directory: str) -> str:
    for name in ("README.md", "README.rst", "README.txt", "README"):
        text = _head(os.path.join(directory, name), 8192)
        if text is None:
            continue
        lines = text.splitlines()
        for ln in lines:
            s = ln.strip()
            if s and not s.startswith(("#", "=", "-", "[!", "![", "<", "..")):
                return s
    return ""


def _description(root: str, c: Candidate, m: mf.Manifests) -> str:
    directory = os.path.join(root, c.path)
    return m.description or _docstring(os.path.join(directory, "__init__.py")) or _readme_line(directory)


def _go_module_of(reader: mf.Reader, path: str) -> str:
    """The Go import path of a directory: the nearest go.mod at or above it, plus the rest."""
    rel = path
    while True:
        go = reader.at(rel).go
        mod = go.module if go else ""
        if mod:
            rest = path[len(rel):].lstrip("/")
            return f"{mod}/{rest}" if rest else mod
        if not rel:
            return ""
        rel = rel.rsplit("/", 1)[0] if "/" in rel else ""


def _import_keys(reader: mf.Reader, c: Candidate, m: mf.Manifests) -> dict[str, list[str]]:
    """The names other modules' imports use for this one, by language."""
    root = reader.root
    directory = os.path.join(root, c.path)
    keys: dict[str, list[str]] = {"py": [], "js": [], "rs": [], "go": []}
    if os.path.isfile(os.path.join(directory, "__init__.py")):
        parts, rel = [], c.path
        while rel and os.path.isfile(os.path.join(root, rel, "__init__.py")):
            parts.insert(0, os.path.basename(rel))
            rel = rel.rsplit("/", 1)[0] if "/" in rel else ""
        keys["py"].append(".".join(parts))
    elif c.path:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        for n in names:
            if n.endswith(".py") and n != "__init__.py":
                keys["py"].append(n[:-3])
            elif os.path.isfile(os.path.join(directory, n, "__init__.py")):
                keys["py"].append(n)
    if m.js and m.js.name:
        keys["js"].append(m.js.name)
    if m.rust and m.rust.name:
        keys["rs"].append(m.rust.name.replace("-", "_"))
        if m.rust.lib_name:
            keys["rs"].append(m.rust.lib_name)
    go = _go_module_of(reader, c.path) if (c.path or m.go) else ""
    if go:
        keys["go"].append(go)
    return keys


def _dependencies(modules: list[Candidate], imports: list[list[str]], index_of: dict[int, int]) -> list[list[str]]:
    """For each module, the other modules its imports name (sorted by name)."""
    lookup: dict[str, dict[str, int]] = {"py": {}, "js": {}, "rs": {}, "go": {}}
    for i, c in enumerate(modules):
        for kind, names in c.keys.items():
            for n in names:
                lookup[kind].setdefault(n, i)
    out = []
    for i, tokens in enumerate(imports):
        deps: set[int] = set()
        for token in tokens:
            kind, _, spec = token.partition(":")
            hit = None
            if kind == "mod":
                hit = index_of.get(int(spec))
            elif kind in ("py", "go"):
                sep = "." if kind == "py" else "/"
                parts = spec.split(sep)
                for n in range(len(parts), 0, -1):
                    hit = lookup[kind].get(sep.join(parts[:n]))
                    if hit is not None:
                        break
            elif kind == "js":
                parts = spec.split("/")
                hit = lookup["js"].get("/".join(parts[:2]) if spec.startswith("@") else parts[0])
            elif kind == "rs":
                hit = lookup["rs"].get(spec)
            if hit is not None and hit != i:
                deps.add(hit)
        out.append(sorted(modules[d].name for d in deps))
    return out


# --- the project -----------------------------------------------------------


def _runtime(manifests: list[mf.Manifests], root: str) -> list[str]:
    found: dict[str, str] = {}
    for m in manifests:
        if m.python:
            rp = m.python.requires_python
            if rp and found.get("Python", "Python") == "Python":
                found["Python"] = f"Python {rp}"
            found.setdefault("Python", "Python")
        if m.js:
            node = m.js.node
            if node and found.get("Node.js", "Node.js") == "Node.js":
                found["Node.js"] = f"Node.js {node}"
            found.setdefault("Node.js", "Node.js")
        if m.rust and m.rust.package:
            rv, ed = m.rust.rust_version, m.rust.edition
            if rv and not found.get("Rust", "Rust").startswith("Rust 1"):
                found["Rust"] = f"Rust {rv}"
            found.setdefault("Rust", f"Rust (edition {ed})" if ed else "Rust")
        if m.go and "Go" not in found:
            found["Go"] = f"Go {m.go.go}" if m.go.go else "Go"
    version = _head(os.path.join(root, ".python-version"), 64) if found.get("Python") == "Python" else None
    if version is not None:
        found["Python"] = f"Python {version.strip()}"
    return list(found.values())


# Package managers as the project file names them.
_SHOWN = {"uv": "uv", "poetry": "Poetry", "pdm": "PDM", "pipenv": "Pipenv", "pip": "pip", "pnpm": "pnpm",
          "yarn": "Yarn", "bun": "Bun", "npm": "npm"}


def _package_managers(manifests: list[mf.Manifests]) -> list[str]:
    """From the manifests of the root (first) and of the modules."""
    root_m = manifests[0]
    out: list[str] = []
    if any(m.python for m in manifests):
        out.append(_SHOWN[root_m.locked_by("python") or "pip"])
    if any(m.js for m in manifests):
        declared = root_m.js.package_manager.split("@")[0] if root_m.js and root_m.js.package_manager else ""
        out.append(_SHOWN[declared if declared in ("pnpm", "yarn", "bun", "npm") else root_m.locked_by("js") or "npm"])
    if any(m.rust for m in manifests):
        out.append("Cargo")
    if any(m.go for m in manifests) or "go.work" in root_m.files:
        out.append("Go modules")
    return out


def derive(ws: Workspace, now: str) -> pf.ProjectFile:
    """A fresh project file for the repository, as `repoctx project init` writes it."""
    root = ws.root
    reader = mf.Reader(root)
    root_m = reader.at("")
    cands = candidates(ws, reader)
    scans = _core.scan_modules(root, [c.path for c in cands])
    manifests = {c.path: reader.at(c.path) for c in cands}
    kept: list[int] = []
    for i, (c, scan) in enumerate(zip(cands, scans)):
        if not scan.ignored and (scan.code_files > 0 or c.declared):
            kept.append(i)
    modules = [cands[i] for i in kept]
    for c in modules:
        c.keys = _import_keys(reader, c, manifests[c.path])
    index_of = {orig: new for new, orig in enumerate(kept)}
    deps = _dependencies(modules, [scans[i].imports for i in kept], index_of)

    languages: list[str] = []
    frameworks: list[str] = []
    used = [root_m, *(manifests[c.path] for c in modules if c.path)]
    for m in used:
        languages += _languages(m)
        frameworks += [FRAMEWORKS[d] for d in _framework_deps(m) if d in FRAMEWORKS]
    for i in kept:
        for key in scans[i].key_files:
            lang = EXTENSION_LANGUAGES.get(key.path.rsplit(".", 1)[-1].lower()) if "." in key.path else None
            if lang and key.role != "config":
                languages.append(lang)
    if "TypeScript" in languages and "JavaScript" in languages:
        languages.remove("JavaScript")
    stack = list(dict.fromkeys(languages + frameworks))

    members = [c for c in modules if c.declared]
    entries = [key.path for i in kept for key in scans[i].key_files if key.role == "entry"]
    runnable = any(os.path.basename(p) not in ("__init__.py", "lib.rs", "index.ts", "index.js", "index.tsx", "index.mjs")
                   for p in entries)
    if len(members) >= 2:
        kind = "monorepo"
    elif not modules:
        kind = "unknown"
    else:
        declares_app = (root_m.js and root_m.js.bin) or (root_m.python and root_m.python.scripts)
        kind = "application" if runnable or declares_app else "library"
    sources = sorted({k for d, k in _members(ws, root_m)})
    names = {"cargo": "Cargo workspace", "npm": "npm workspaces", "go": "go.work"}
    pattern = (
        f"monorepo ({', '.join(names[s] for s in sources)})" if len(members) >= 2
        else "modular" if len(modules) >= 2 else "single module"
    )
    description = (
        f"{len(modules)} module{'s' if len(modules) != 1 else ''} found from "
        + ("workspace members, " if members else "")
        + "packages and top-level source directories."
    )
    return pf.ProjectFile(
        version=pf.SCHEMA_VERSION,
        project=pf.Project(name=root_m.name or os.path.basename(root), type=kind, path="."),
        tech=pf.Tech(stack=stack, runtime=", ".join(_runtime(used, root)),
                     package_manager=", ".join(_package_managers(used))),
        architecture=pf.Architecture(pattern=pattern, description=description),
        modules={
            c.name: pf.Module(
                description=_description(root, c, manifests[c.path]),
                path=c.path or ".",
                key_files=[pf.KeyFile(path=key.path, role=key.role) for key in scans[i].key_files],
                dependencies=deps[n],
            )
            for n, (i, c) in enumerate(zip(kept, modules))
        },
        metadata=pf.Metadata(created=now, updated=now, last_scan=now),
    )
