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

import glob
import os
import re
import tomllib
from dataclasses import dataclass, field

import msgspec

from repoctx import _core
from repoctx.base import fs
from repoctx.formats import bounded
from repoctx.formats import project_file as pf
from repoctx.base.workspace import Workspace, load_yaml_file

# Directories whose children are the modules (`src/auth`, `packages/ui`, `internal/db`).
CONTAINERS = {
    "src", "lib", "libs", "app", "apps", "packages", "crates", "services", "internal", "pkg",
    "cmd", "modules", "components", "python",
}
PYTHON_BASES = ("", "src", "python", "lib")
SKIP = set(_core.SKIP_DIRS)
MAX_MANIFEST_BYTES = 4 << 20  # a package.json, pyproject.toml or Cargo.toml larger is not read

EXTENSION_LANGUAGES = {
    "py": "Python", "rs": "Rust", "go": "Go", "ts": "TypeScript", "tsx": "TypeScript",
    "js": "JavaScript", "jsx": "JavaScript", "mjs": "JavaScript", "cjs": "JavaScript", "java": "Java",
    "kt": "Kotlin", "rb": "Ruby", "php": "PHP", "cs": "C#", "swift": "Swift", "c": "C", "h": "C",
    "cpp": "C++", "cc": "C++", "hpp": "C++", "scala": "Scala", "ex": "Elixir", "vue": "Vue",
    "svelte": "Svelte",
}
# Well-known dependencies worth naming in the stack.
FRAMEWORKS = {
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "starlette": "Starlette",
    "react": "React", "next": "Next.js", "vue": "Vue", "svelte": "Svelte", "@angular/core": "Angular",
    "express": "Express", "@nestjs/core": "NestJS", "fastify": "Fastify",
    "tokio": "Tokio", "axum": "Axum", "actix-web": "Actix Web", "pyo3": "PyO3",
    "github.com/gin-gonic/gin": "Gin", "github.com/labstack/echo/v4": "Echo",
}


@dataclass
class Manifests:
    """The manifests of one directory that repoctx reads (each {} when absent or unreadable)."""

    directory: str
    pyproject: dict
    cargo: dict
    package: dict
    go_mod: dict  # {"module": ..., "go": ..., "require": [...]}
    python_files: bool  # setup.py, setup.cfg or requirements.txt

    @classmethod
    def read(cls, directory: str) -> Manifests:
        j = lambda n: os.path.join(directory, n)  # noqa: E731
        return cls(
            directory,
            _toml(j("pyproject.toml")),
            _toml(j("Cargo.toml")),
            _json(j("package.json")),
            _go_mod(j("go.mod")),
            any(os.path.isfile(j(n)) for n in ("setup.py", "setup.cfg", "requirements.txt")),
        )

    def name(self) -> str:
        for value in (
            self.pyproject.get("project", {}).get("name"),
            self.pyproject.get("tool", {}).get("poetry", {}).get("name"),
            self.package.get("name"),
            self.cargo.get("package", {}).get("name"),
            self.go_mod.get("module", "").rsplit("/", 1)[-1] or None,
        ):
            if isinstance(value, str) and value.strip():
                return value.strip()
        return ""

    def description(self) -> str:
        for value in (
            self.pyproject.get("project", {}).get("description"),
            self.pyproject.get("tool", {}).get("poetry", {}).get("description"),
            self.package.get("description"),
            self.cargo.get("package", {}).get("description"),
        ):
            if isinstance(value, str) and value.strip():
                return value.strip()
        return ""

    def languages(self) -> list[str]:
        out = []
        if self.pyproject or self.python_files:
            out.append("Python")
        if self.package:
            deps = _npm_deps(self.package)
            if "typescript" in deps or os.path.isfile(os.path.join(self.directory, "tsconfig.json")):
                out.append("TypeScript")
            out.append("Node.js")
        if self.cargo.get("package"):
            out.append("Rust")
        if self.go_mod:
            out.append("Go")
        return out

    def dependencies(self) -> list[str]:
        deps: list[str] = []
        for spec in self.pyproject.get("project", {}).get("dependencies", []) or []:
            if isinstance(spec, str):
                deps.append(re.split(r"[\s<>=!~;\[(]", spec.strip(), maxsplit=1)[0].lower())
        deps += [str(k).lower() for k in (self.pyproject.get("tool", {}).get("poetry", {}).get("dependencies") or {})]
        deps += _npm_deps(self.package)
        deps += [str(k) for k in (self.cargo.get("dependencies") or {})]
        deps += self.go_mod.get("require", [])
        return deps


def _read(path: str) -> bytes | None:
    """A file of the repository, through the confined layer: None when absent, too large, not
    a file or behind a link that leads out (what is derived never carries outside content)."""
    try:
        return fs.read_bytes(*fs.split(path), MAX_MANIFEST_BYTES)
    except OSError:
        return None


def _head(path: str, n: int) -> str | None:
    """The first `n` bytes of a file as text, through the confined layer, or None."""
    try:
        return fs.read_head(*fs.split(path), n).decode("utf-8", "replace")
    except OSError:
        return None


def _toml(path: str) -> dict:
    try:
        data = bounded.toml((_read(path) or b"").decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _json(path: str) -> dict:
    raw = _read(path)
    try:
        data = bounded.json(raw) if raw is not None else None
    except msgspec.DecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _go_mod(path: str) -> dict:
    text = _head(path, 1 << 20)
    if text is None:
        return {}
    out: dict = {"require": []}
    in_require = False
    for line in text.splitlines():
        words = line.split("//")[0].split()
        if not words:
            continue
        if in_require:
            if words[0] == ")":
                in_require = False
            else:
                out["require"].append(words[0])
        elif words[0] == "module" and len(words) > 1:
            out["module"] = words[1].strip('"')
        elif words[0] == "go" and len(words) > 1:
            out["go"] = words[1]
        elif words[0] == "require":
            if words[1:2] == ["("]:
                in_require = True
            elif len(words) > 1:
                out["require"].append(words[1])
    return out if "module" in out else {}


def _npm_deps(package: dict) -> list[str]:
    deps: list[str] = []
    for key in ("dependencies", "devDependencies", "peerDependencies"):
        value = package.get(key)
        if isinstance(value, dict):
            deps += [str(k) for k in value]
    return deps


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


def _expand(ws: Workspace, patterns: list, marker: str) -> list[str]:
    """Workspace member globs as relative directories holding `marker`, confined to the root."""
    found: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str) or pattern.startswith("!") or "\x00" in pattern:
            continue
        for hit in sorted(glob.glob(os.path.join(ws.root, pattern), recursive=True)):
            rel = os.path.relpath(hit, ws.root).replace(os.sep, "/")
            parts = rel.split("/")
            if rel.startswith("..") or any(p in SKIP or p.startswith(".") for p in parts if p != "."):
                continue
            if not ws.contains_real(hit) or not os.path.isfile(os.path.join(hit, marker)):
                continue
            rel = "" if rel == "." else rel
            if rel not in found:
                found.append(rel)
    return found


def _go_work_dirs(root: str) -> list[str]:
    text = _head(os.path.join(root, "go.work"), 1 << 20)
    if text is None:
        return []
    dirs, in_use = [], False
    for line in text.splitlines():
        words = line.split("//")[0].split()
        if not words:
            continue
        if in_use:
            if words[0] == ")":
                in_use = False
            else:
                dirs.append(words[0])
        elif words[0] == "use":
            if words[1:2] == ["("]:
                in_use = True
            elif len(words) > 1:
                dirs.append(words[1])
    return dirs


def _members(ws: Workspace, root_m: Manifests) -> list[tuple[str, str]]:
    """(relative dir, kind) of declared workspace members."""
    members: list[tuple[str, str]] = []
    workspace = root_m.cargo.get("workspace") or {}
    excluded = set(_expand(ws, list(workspace.get("exclude") or []), "Cargo.toml"))
    members += [(d, "cargo") for d in _expand(ws, list(workspace.get("members") or []), "Cargo.toml") if d not in excluded]
    npm = root_m.package.get("workspaces")
    patterns = npm.get("packages", []) if isinstance(npm, dict) else npm or []
    try:
        pnpm = load_yaml_file(os.path.join(ws.root, "pnpm-workspace.yaml"))
    except bounded.YamlError:  # read as no workspace members, as a missing file is
        pnpm = None
    if isinstance(pnpm, dict) and isinstance(pnpm.get("packages"), list):
        patterns = [*patterns, *pnpm["packages"]]
    members += [(d, "npm") for d in _expand(ws, list(patterns), "package.json")]
    members += [(d, "go") for d in _expand(ws, _go_work_dirs(ws.root), "go.mod")]
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


def candidates(ws: Workspace, root_m: Manifests) -> list[Candidate]:
    """Every directory that may be a module, before the scan tells which hold source."""
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
        name = _module_name(path, Manifests.read(os.path.join(ws.root, path)), root_m, ws.root)
        if name in used:
            name = path or "root"
        used.add(name)
        names[path] = name
    return [Candidate(names[p], p, paths[p]) for p in ordered]


def _module_name(path: str, m: Manifests, root_m: Manifests, root: str) -> str:
    if not path:
        return root_m.name() or os.path.basename(root)
    declared = m.package.get("name") or m.cargo.get("package", {}).get("name")
    if isinstance(declared, str) and declared.strip():
        return declared.strip().rsplit("/", 1)[-1]  # "@acme/ui" -> "ui"
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


def _description(root: str, c: Candidate, m: Manifests) -> str:
    directory = os.path.join(root, c.path)
    return m.description() or _docstring(os.path.join(directory, "__init__.py")) or _readme_line(directory)


def _go_module_of(root: str, path: str) -> str:
    """The Go import path of a directory: the nearest go.mod at or above it, plus the rest."""
    rel = path
    while True:
        mod = _go_mod(os.path.join(root, rel, "go.mod")).get("module")
        if mod:
            rest = path[len(rel):].lstrip("/")
            return f"{mod}/{rest}" if rest else mod
        if not rel:
            return ""
        rel = rel.rsplit("/", 1)[0] if "/" in rel else ""


def _import_keys(root: str, c: Candidate, m: Manifests) -> dict[str, list[str]]:
    """The names other modules' imports use for this one, by language."""
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
    if isinstance(m.package.get("name"), str):
        keys["js"].append(m.package["name"])
    crate = m.cargo.get("package", {}).get("name")
    if isinstance(crate, str):
        keys["rs"].append(crate.replace("-", "_"))
        lib = m.cargo.get("lib", {}).get("name")
        if isinstance(lib, str):
            keys["rs"].append(lib)
    go = _go_module_of(root, c.path) if (c.path or m.go_mod) else ""
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


def _runtime(manifests: list[Manifests], root: str) -> list[str]:
    found: dict[str, str] = {}
    for m in manifests:
        if m.pyproject or m.python_files:
            rp = m.pyproject.get("project", {}).get("requires-python")
            if isinstance(rp, str) and found.get("Python", "Python") == "Python":
                found["Python"] = f"Python {rp}"
            found.setdefault("Python", "Python")
        if m.package:
            engines = m.package.get("engines")
            node = engines.get("node") if isinstance(engines, dict) else None
            if isinstance(node, str) and found.get("Node.js", "Node.js") == "Node.js":
                found["Node.js"] = f"Node.js {node}"
            found.setdefault("Node.js", "Node.js")
        pkg = m.cargo.get("package", {})
        if pkg:
            rv, ed = pkg.get("rust-version"), pkg.get("edition")
            if isinstance(rv, str) and not found.get("Rust", "Rust").startswith("Rust 1"):
                found["Rust"] = f"Rust {rv}"
            found.setdefault("Rust", f"Rust (edition {ed})" if isinstance(ed, str) else "Rust")
        if m.go_mod and "Go" not in found:
            found["Go"] = f"Go {m.go_mod['go']}" if m.go_mod.get("go") else "Go"
    version = _head(os.path.join(root, ".python-version"), 64) if found.get("Python") == "Python" else None
    if version is not None:
        found["Python"] = f"Python {version.strip()}"
    return list(found.values())


def _package_managers(manifests: list[Manifests], root: str) -> list[str]:
    has = lambda n: os.path.exists(os.path.join(root, n))  # noqa: E731
    out: list[str] = []
    if any(m.pyproject or m.python_files for m in manifests):
        out.append(
            "uv" if has("uv.lock") else "Poetry" if has("poetry.lock") else "PDM" if has("pdm.lock")
            else "Pipenv" if has("Pipfile") else "pip"
        )
    if any(m.package for m in manifests):
        declared = manifests[0].package.get("packageManager")
        name = declared.split("@")[0] if isinstance(declared, str) and declared else None
        out.append(
            {"pnpm": "pnpm", "yarn": "Yarn", "bun": "Bun", "npm": "npm"}.get(name or "")
            or ("pnpm" if has("pnpm-lock.yaml") else "Yarn" if has("yarn.lock")
                else "Bun" if has("bun.lockb") or has("bun.lock") else "npm")
        )
    if any(m.cargo for m in manifests):
        out.append("Cargo")
    if any(m.go_mod for m in manifests) or has("go.work"):
        out.append("Go modules")
    return out


def derive(ws: Workspace, now: str) -> pf.ProjectFile:
    """A fresh project file for the repository, as `repoctx project init` writes it."""
    root = ws.root
    root_m = Manifests.read(root)
    cands = candidates(ws, root_m)
    scans = _core.scan_modules(root, [c.path for c in cands])
    manifests = {c.path: (root_m if not c.path else Manifests.read(os.path.join(root, c.path))) for c in cands}
    kept: list[int] = []
    for i, (c, (code_files, _keys, _imports, ignored)) in enumerate(zip(cands, scans)):
        if not ignored and (code_files > 0 or c.declared):
            kept.append(i)
    modules = [cands[i] for i in kept]
    for c in modules:
        c.keys = _import_keys(root, c, manifests[c.path])
    index_of = {orig: new for new, orig in enumerate(kept)}
    deps = _dependencies(modules, [scans[i][2] for i in kept], index_of)

    languages: list[str] = []
    frameworks: list[str] = []
    used = [root_m, *(manifests[c.path] for c in modules if c.path)]
    for m in used:
        languages += m.languages()
        frameworks += [FRAMEWORKS[d] for d in m.dependencies() if d in FRAMEWORKS]
    for i in kept:
        for path, role in scans[i][1]:
            lang = EXTENSION_LANGUAGES.get(path.rsplit(".", 1)[-1]) if "." in path else None
            if lang and role != "config":
                languages.append(lang)
    if "TypeScript" in languages and "JavaScript" in languages:
        languages.remove("JavaScript")
    stack = list(dict.fromkeys(languages + frameworks))

    members = [c for c in modules if c.declared]
    entries = [p for i in kept for p, role in scans[i][1] if role == "entry"]
    runnable = any(os.path.basename(p) not in ("__init__.py", "lib.rs", "index.ts", "index.js", "index.tsx", "index.mjs")
                   for p in entries)
    if len(members) >= 2:
        kind = "monorepo"
    elif not modules:
        kind = "unknown"
    else:
        kind = "application" if runnable or root_m.package.get("bin") or root_m.pyproject.get("project", {}).get("scripts") else "library"
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
        project=pf.Project(name=root_m.name() or os.path.basename(root), type=kind, path="."),
        tech=pf.Tech(stack=stack, runtime=", ".join(_runtime(used, root)),
                     package_manager=", ".join(_package_managers(used, root))),
        architecture=pf.Architecture(pattern=pattern, description=description),
        modules={
            c.name: pf.Module(
                description=_description(root, c, manifests[c.path]),
                path=c.path or ".",
                key_files=[pf.KeyFile(path=p, role=r) for p, r in scans[i][1]],
                dependencies=deps[n],
            )
            for n, (i, c) in enumerate(zip(kept, modules))
        },
        metadata=pf.Metadata(created=now, updated=now, last_scan=now),
    )
