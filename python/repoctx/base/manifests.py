"""What a directory's manifests declare: the one place that reads them (issue 21).

pyproject.toml (PEP 621 and Poetry), requirements.txt, setup.py and setup.cfg (present
or not), Cargo.toml (the package and its [workspace]), package.json (and the packages of
pnpm-workspace.yaml), go.mod and go.work (the core's one parser of their shared syntax,
rust/formats/gomod.rs, which the scopes' index also resolves Go imports by), and whether a
Makefile has a `test` target. `project scan` (`project init`) and the scopes' generator
(`init`, `regen`) both read here, through a `Reader` that reads each directory once.

Every file is read through the confined layer (`base.fs`: a link that leads out of the
root is not followed) within a cap, and parsed by the bounded parsers. A structured file
(TOML, JSON, YAML) is read whole up to its cap; a line-based one (go.mod, go.work,
requirements.txt, Makefile) up to its first `LINES_CAP` bytes, less a line cut there.

A manifest that cannot be read (over its cap, not a regular file, behind a link that leads
out) or parsed (TOML or JSON that is malformed or not UTF-8, JSON that is not an object, a
go.mod without a module path) declares nothing: it is read as absent, and its name is in
`Manifests.skipped`. A value of the wrong type (a `dependencies` that is a string, a
`[package]` that is not a table) is read as absent, the rest of the file as written.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from stat import S_ISLNK, S_ISREG
from typing import Any, ClassVar

from repoctx import _core
from repoctx.base import fs
from repoctx.formats import bounded

DOCUMENT_CAP = 4 << 20  # a larger pyproject.toml, Cargo.toml, package.json is not read
LINES_CAP = 1 << 20  # go.mod, go.work, requirements.txt, Makefile: their first MiB
YAML_CAP = 1 << 20  # pnpm-workspace.yaml (as workspace.load_yaml_file)

PYTHON_FILES = ("pyproject.toml", "requirements.txt", "setup.py", "setup.cfg")
# The files that say which package manager a directory uses: (name, ecosystem, manager), in
# the order they are looked for.
LOCK_FILES = (
    ("uv.lock", "python", "uv"), ("poetry.lock", "python", "poetry"), ("pdm.lock", "python", "pdm"),
    ("Pipfile.lock", "python", "pipenv"), ("Pipfile", "python", "pipenv"),
    ("pnpm-lock.yaml", "js", "pnpm"), ("yarn.lock", "js", "yarn"), ("bun.lockb", "js", "bun"),
    ("bun.lock", "js", "bun"), ("package-lock.json", "js", "npm"),
)
# Every name a directory is searched for. tsconfig.json, pytest.ini, tox.ini and the lock
# files are only noted as present (in `files`), never read.
NAMES = frozenset({
    *PYTHON_FILES, "Cargo.toml", "package.json", "pnpm-workspace.yaml", "go.mod", "go.work",
    "Makefile", "pytest.ini", "tox.ini", "tsconfig.json", *(name for name, _, _ in LOCK_FILES),
})

# Dependency kinds. MAIN kinds are what the code uses; the others are declared for
# development, builds, optional features, another package's sake, or a dependency's.
MAIN = frozenset({"runtime", "workspace"})
KINDS = ("runtime", "workspace", "optional", "dev", "peer", "build", "indirect")


def norm(ecosystem: str, name: str) -> str:
    """A dependency's name as its ecosystem compares them (PEP 503 for Python; Cargo's `-`
    and `_` are one; npm and Go names are exact)."""
    if ecosystem == "python":
        return re.sub(r"[-_.]+", "-", name).lower()
    if ecosystem == "rust":
        return name.replace("-", "_")
    return name


@dataclass(frozen=True)
class Dependency:
    name: str  # as written
    spec: str  # as shown: "requests>=2", "serde 1.0", "react ^18.2", "golang.org/x/net v0.20.0"
    kind: str  # one of KINDS
    local: bool = False  # a package of this repository (Cargo `path`, npm workspace:/file:/link:)


@dataclass(frozen=True)
class Section:
    """One ecosystem's manifests in one directory."""

    name: str | None = None  # stripped; None when absent, blank or not a string
    description: str | None = None
    version: str | None = None  # the package's version (Go has none in go.mod)
    dependencies: tuple[Dependency, ...] = ()
    ecosystem: ClassVar[str] = ""

    @cached_property
    def main(self) -> dict[str, str]:
        """Normalised name -> spec of the dependencies the code uses (MAIN kinds, not local;
        the first spelling of a name wins)."""
        return self._keyed(True)

    @cached_property
    def extra(self) -> dict[str, str]:
        """The same for the other kinds (optional, dev, peer, build, indirect)."""
        return self._keyed(False)

    def _keyed(self, main: bool) -> dict[str, str]:
        out: dict[str, str] = {}
        for d in self.dependencies:
            if not d.local and (d.kind in MAIN) == main:
                out.setdefault(norm(self.ecosystem, d.name), d.spec)
        return out


@dataclass(frozen=True)
class Python(Section):
    ecosystem: ClassVar[str] = "python"
    requires_python: str | None = None
    scripts: tuple[str, ...] = ()  # [project.scripts] and [tool.poetry.scripts]
    pytest: bool = False  # pyproject.toml has a [tool.pytest…] table
    pyproject: bool = False  # pyproject.toml was read (else only requirements.txt / setup.*)


@dataclass(frozen=True)
class Rust(Section):
    ecosystem: ClassVar[str] = "rust"
    package: bool = False  # a non-empty [package] table (a crate, not only a workspace)
    lib_name: str | None = None
    edition: str | None = None
    rust_version: str | None = None
    members: tuple[str, ...] = ()  # [workspace] members patterns
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Js(Section):
    ecosystem: ClassVar[str] = "js"
    workspaces: tuple[str, ...] = ()  # package.json `workspaces` (a list or {packages: [...]})
    scripts: dict[str, str] = field(default_factory=dict)
    bin: bool = False
    node: str | None = None  # engines.node
    package_manager: str | None = None  # packageManager, as written ("pnpm@9.1.0")


@dataclass(frozen=True)
class Go(Section):
    ecosystem: ClassVar[str] = "go"
    module: str = ""  # never empty in a Manifests (a go.mod without one is not read)
    go: str | None = None  # the `go` directive


ECOSYSTEMS = ("python", "rust", "js", "go")


@dataclass(frozen=True)
class Manifests:
    """The manifests of one directory."""

    directory: str
    files: frozenset[str] = frozenset()  # names of NAMES present (read or not)
    skipped: tuple[str, ...] = ()  # present but unreadable or malformed: read as absent
    python: Python | None = None  # pyproject.toml, requirements.txt, setup.py or setup.cfg
    rust: Rust | None = None
    js: Js | None = None
    go: Go | None = None
    go_work: tuple[str, ...] = ()  # `use` directories of a go.work here
    pnpm_packages: tuple[str, ...] = ()  # pnpm-workspace.yaml `packages`
    make_test: bool = False  # a Makefile with a `test` target

    def sections(self) -> dict[str, Section]:
        """The ecosystems present, in the order python, rust, js, go."""
        return {e: s for e in ECOSYSTEMS if (s := getattr(self, e)) is not None}

    def locked_by(self, ecosystem: str | None = None) -> str | None:
        """The package manager the directory's first lock file names (of `ecosystem`, when
        given): "uv", "poetry", "pdm", "pipenv", "pnpm", "yarn", "bun" or "npm"."""
        return next((pm for name, eco, pm in LOCK_FILES if name in self.files and ecosystem in (None, eco)), None)

    def section(self, ecosystem: str) -> Section | None:
        """One ecosystem's section ("python", "rust", "js", "go"), None when absent or unknown."""
        return getattr(self, ecosystem) if ecosystem in ECOSYSTEMS else None

    @property
    def name(self) -> str:
        """The declared name: Python's (PEP 621, then Poetry), package.json's, the crate's, or
        the last element of the Go module path; "" when none is declared."""
        go = self.go.module.rsplit("/", 1)[-1].strip() if self.go else ""
        return next((n for n in (*self._each("name"), go) if n), "")

    @property
    def description(self) -> str:
        """Python's (PEP 621, then Poetry), package.json's or the crate's; "" when none."""
        return next((d for d in self._each("description") if d), "")

    @property
    def version(self) -> str:
        return next((v for v in self._each("version") if v), "")

    def _each(self, attr: str) -> list[str | None]:
        return [getattr(s, attr) if s else None for s in (self.python, self.js, self.rust)]


# --- reading -------------------------------------------------------------------


def read(directory: str, names: Iterable[str] | None = None) -> Manifests:
    """The manifests of `directory` (absolute, under a confined root). `names`: the names of
    the directory's files when the caller has listed it (others are not looked for);
    otherwise the directory is listed here."""
    present = _present(directory) if names is None else frozenset(n for n in names if n in NAMES)
    skipped: list[str] = []

    def document(name: str, parse: Callable[[bytes], object], cap: int = DOCUMENT_CAP) -> dict[str, Any] | None:
        if name not in present:
            return None
        try:
            data = parse(fs.read_bytes(*fs.split(os.path.join(directory, name)), cap))
        except (OSError, ValueError, bounded.YamlError):  # unreadable; or malformed (not UTF-8, TOML, JSON, YAML)
            data = None
        if not isinstance(data, dict):
            skipped.append(name)
            return None
        return data

    def lines(name: str) -> str | None:
        if name not in present:
            return None
        text = _head_lines(os.path.join(directory, name))
        if text is None:
            skipped.append(name)
        return text

    pyproject = document("pyproject.toml", lambda raw: bounded.toml(raw.decode()))
    requirements = lines("requirements.txt")
    python = _python(pyproject, requirements) if (
        pyproject is not None or requirements is not None or present & {"setup.py", "setup.cfg"}) else None
    cargo = document("Cargo.toml", lambda raw: bounded.toml(raw.decode()))
    package = document("package.json", bounded.json)
    pnpm = document("pnpm-workspace.yaml", bounded.yaml, YAML_CAP)
    go_mod = lines("go.mod")
    go = parse_go_mod(go_mod) if go_mod is not None else None
    if go_mod is not None and go is None:
        skipped.append("go.mod")
    go_work = lines("go.work")
    make = lines("Makefile")
    return Manifests(
        directory=directory,
        files=present,
        skipped=tuple(sorted(skipped)),
        python=python,
        rust=_rust(cargo) if cargo is not None else None,
        js=_js(package) if package is not None else None,
        go=go,
        go_work=parse_go_work(go_work or ""),
        pnpm_packages=_strings(pnpm.get("packages")) if pnpm is not None else (),
        make_test=make is not None and re.search(r"^test\s*:", make, re.M) is not None,
    )


class Reader:
    """Each directory's manifests, read once: by a path relative to `root` ("" or "." for
    the root itself)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._by_dir: dict[str, Manifests] = {}

    def learn(self, rel: str, names: Iterable[str]) -> None:
        """Read `rel` from the names a listing of it gave (when it was not read yet)."""
        key = _key(rel)
        if key not in self._by_dir:
            self._by_dir[key] = read(os.path.join(self.root, rel), names)

    def at(self, rel: str) -> Manifests:
        key = _key(rel)
        found = self._by_dir.get(key)
        if found is None:
            found = self._by_dir[key] = read(os.path.join(self.root, rel))
        return found


def _key(rel: str) -> str:
    return posixpath.normpath(rel or ".")


def _present(directory: str) -> frozenset[str]:
    """The names of NAMES in a directory that are regular files or links to one."""
    root, rel = fs.split(directory)
    try:
        names = NAMES.intersection(fs.listdir(root, rel))
    except OSError:
        return frozenset()
    return frozenset(n for n in names if _is_file(root, posixpath.join(rel, n)))


def _is_file(root: str, rel: str) -> bool:
    """A regular file, a link to one, or a link that leads out of the root (there, but never
    read: a manifest behind it is skipped)."""
    try:
        st = fs.lstat(root, rel)
        if st is None or S_ISREG(st.st_mode):
            return st is not None
        return S_ISLNK(st.st_mode) and fs.is_file(root, rel)
    except OSError:
        return True


def _head_lines(path: str) -> str | None:
    """The first LINES_CAP bytes of a file as text, less a last line the cap cut."""
    try:
        head = fs.read_head(*fs.split(path), LINES_CAP + 1)
    except OSError:
        return None
    if len(head) > LINES_CAP:
        head = head[: head.rfind(b"\n", 0, LINES_CAP) + 1]
    return head.decode("utf-8", "replace")


def _str(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _version_of(spec: object) -> str:
    """A Poetry or Cargo dependency's version: the string, or a table's `version`."""
    if isinstance(spec, str):
        return spec
    version = spec.get("version") if isinstance(spec, dict) else None
    return version if isinstance(version, str) else ""


# --- Python --------------------------------------------------------------------

# A PEP 508 name where a requirement starts (not the scheme of a URL, nor a path).
_PEP508_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?=\s|$|[\[(;<>=!~@])")


def _requirement(spec: str, kind: str) -> Dependency | None:
    m = _PEP508_NAME.match(spec)
    return Dependency(m.group(1), spec.strip(), kind) if m else None


def _python(pyproject: dict[str, Any] | None, requirements: str | None) -> Python:
    data = pyproject or {}
    project = _table(data, "project")
    tool = _table(data, "tool")
    poetry = _table(tool, "poetry")
    deps: list[Dependency] = []
    for spec in _strings(project.get("dependencies")):
        if d := _requirement(spec, "runtime"):
            deps.append(d)
    for group in _table(project, "optional-dependencies").values():
        for spec in _strings(group):
            if d := _requirement(spec, "optional"):
                deps.append(d)
    for name, spec in _table(poetry, "dependencies").items():
        if name != "python":  # the interpreter, not a dependency
            deps.append(Dependency(name, f"{name} {_version_of(spec)}".strip(), "runtime"))
    for line in (requirements or "").splitlines():
        line = line.split("#", 1)[0].strip().removesuffix("\\").strip()  # `\`: continued by options
        if line and not line.startswith("-") and (d := _requirement(line, "runtime")):
            deps.append(d)
    return Python(
        name=_str(project.get("name")) or _str(poetry.get("name")),
        description=_str(project.get("description")) or _str(poetry.get("description")),
        version=_str(project.get("version")) or _str(poetry.get("version")),
        dependencies=tuple(deps),
        requires_python=_str(project.get("requires-python")),
        scripts=tuple(dict.fromkeys([*_table(project, "scripts"), *_table(poetry, "scripts")])),
        pytest="pytest" in tool,
        pyproject=pyproject is not None,
    )


# --- Rust ----------------------------------------------------------------------


def _rust(data: dict[str, Any]) -> Rust:
    package = _table(data, "package")
    workspace = _table(data, "workspace")
    deps: list[Dependency] = []
    for table, kind in ((_table(data, "dependencies"), "runtime"), (_table(workspace, "dependencies"), "workspace"),
                        (_table(data, "dev-dependencies"), "dev"), (_table(data, "build-dependencies"), "build")):
        for name, spec in table.items():
            local = isinstance(spec, dict) and "path" in spec
            deps.append(Dependency(name, f"{name} {_version_of(spec)}".strip(), kind, local))
    return Rust(
        name=_str(package.get("name")),
        description=_str(package.get("description")),
        version=_str(package.get("version")),
        dependencies=tuple(deps),
        package=bool(package),
        lib_name=_str(_table(data, "lib").get("name")),
        edition=_str(package.get("edition")),
        rust_version=_str(package.get("rust-version")),
        members=_strings(workspace.get("members")),
        exclude=_strings(workspace.get("exclude")),
    )


# --- JavaScript ----------------------------------------------------------------


def _js(data: dict[str, Any]) -> Js:
    deps: list[Dependency] = []
    for key, kind in (("dependencies", "runtime"), ("peerDependencies", "peer"), ("devDependencies", "dev")):
        for name, spec in _table(data, key).items():
            if isinstance(spec, str):  # a version, range, tag, URL or protocol; anything else is not npm's
                deps.append(Dependency(name, f"{name} {spec}", kind, spec.startswith(("workspace:", "file:", "link:"))))
    workspaces = data.get("workspaces")
    bin_ = data.get("bin")
    return Js(
        name=_str(data.get("name")),
        description=_str(data.get("description")),
        version=_str(data.get("version")),
        dependencies=tuple(deps),
        workspaces=_strings(workspaces.get("packages") if isinstance(workspaces, dict) else workspaces),
        scripts={k: v for k, v in _table(data, "scripts").items() if isinstance(v, str)},
        bin=isinstance(bin_, (str, dict)) and bool(bin_),
        node=_str(_table(data, "engines").get("node")),
        package_manager=_str(data.get("packageManager")),
    )


# --- Go ------------------------------------------------------------------------
# The one parser of go.mod and go.work is the core's (rust/formats/gomod.rs: Go's grammar,
# lenient line by line); the scopes' index resolves Go imports by the same module path.


def parse_go_mod(text: str) -> Go | None:
    """A go.mod's module path, `go` version and requirements (`// indirect` ones of kind
    "indirect"); None without a module path. A directive given twice: the last one holds."""
    got = _core.parse_go(text)
    if not got.module:
        return None
    deps = tuple(Dependency(r.path, f"{r.path} {r.version}", "indirect" if r.indirect else "runtime")
                 for r in got.requires)
    return Go(dependencies=deps, module=got.module, go=got.go)


def parse_go_work(text: str) -> tuple[str, ...]:
    """The directories a go.work `use`s, as written."""
    return tuple(_core.parse_go(text).uses)
