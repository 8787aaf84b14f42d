"""Deriving a `.context.yaml` from the code, and merging it with the one on disk.

The core reads the sources (`_core.ScopeSources`); this module turns its facts,
the manifests (pyproject.toml, Cargo.toml, package.json, go.mod …) and the
children's summaries into schema fields.

Who owns a field: repoctx names every field it derived in `derived_fields`. On
regeneration a field listed there is refreshed; a field present but not listed
was written by a person or an agent and is kept as it is. A derived summary is
also kept once someone edits it, even without touching `derived_fields`: the
summary is a pure function of the file's other fields (`derive_summary`), so a
summary that no longer equals it was edited.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections import Counter

import msgspec
from msgspec import UNSET
from msgspec.structs import replace

from repoctx import _core
from repoctx.base import manifests as mf
from repoctx.base.words import plural
from repoctx.formats import context_file as cf
from repoctx.scopes.gitstate import recorded_commit


class ScopeFacts(msgspec.Struct):
    """One directory's sources as the core read them (rust/scopes/sources.rs `ScopeFacts`)."""

    files: list[cf.FileEntry]
    generic: list[str]  # files whose purpose is only a label for their kind
    exports: list[str]
    interfaces: list[cf.Interface]
    internal: list[str]
    external: list[tuple[str, str]]  # (ecosystem, package) as imported
    manifests: list[str]
    tests: list[str]  # languages with tests here


decode_facts = msgspec.json.Decoder(list[ScopeFacts]).decode

MAINTENANCE = (
    "Fields named in derived_fields are derived from the code: `repoctx regen` refreshes them and "
    "keeps every other field as written. When you change this directory, update the other fields "
    "(MCP tool update_context, or by hand). Never put secrets in this file."
)

# The fields repoctx derives, in the order derived_fields lists them.
DERIVED = (
    "summary", "files", "interfaces", "dependencies.internal", "dependencies.external",
    "subdirectories", "testing", "exports", "project", "structure", "evidence", "maintenance",
)

_LABELS = frozenset(_core.FILE_LABELS)
MAX_TEXT = 300  # as the core's purposes (rust/lang/text.rs): a longer sentence is cut after a word
MAX_STRUCTURE = 100


def is_generic(purpose: str) -> bool:
    """Whether a file purpose is only the label of its kind (optionally with its first exports)."""
    return purpose.split(" defining ", 1)[0] in _LABELS


_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)")


def first_sentence(text: str) -> str:
    """The first sentence of the first line, whole up to MAX_TEXT characters; a longer one is
    cut after a word and marked `…`."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    m = _SENTENCE.match(line)
    out = m.group(1) if m else line
    if len(out) <= MAX_TEXT:
        return out
    cut = out[: MAX_TEXT - 1]
    if cut.rfind(" ") > len(cut) // 2:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


def _sentence(text: str) -> str:
    """The first sentence, ending as one: a full stop added where it has none (a `,` or `:`
    that ended its line gives way to it)."""
    text = first_sentence(text)
    return text if not text or text[-1] in ".!?…" else text.rstrip(",;:") + "."


def _listing(names: list[str], shown: int) -> str:
    """`a, b, c and 4 more`: the first names, then how many are left (never `…`, which would
    end a sentence as `….`)."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


# --- the summary ---------------------------------------------------------------

_DOC_FILES = (
    "__init__.py", "lib.rs", "mod.rs", "main.rs", "doc.go", "index.ts", "index.tsx", "index.js",
    "index.mjs", "README.md", "README.rst", "README.txt", "README", "readme.md", "package.json",
    "Cargo.toml", "pyproject.toml",
)
# The language (or format) of each extension, from the core's one table (docs/languages.md).
_LANG_OF_EXT = {k.key: k.language for k in _core.file_kinds() if k.language}


def derive_summary(ctx: cf.ContextFile) -> str:
    """The summary repoctx writes for a context file, from the file's own fields only."""
    files = ctx.files or []
    purposes = {f.name: f.purpose for f in files}
    doc = ctx.project.description if ctx.project else None
    if doc is None:
        doc = next((p for n in _DOC_FILES if (p := purposes.get(n)) and not is_generic(p)), None)
    if doc is None:
        doc = next((p for p in purposes.values() if p.startswith("Package ") and not is_generic(p)), None)
    if doc:
        parts = [_sentence(doc)]
    elif files:
        langs = Counter(_LANG_OF_EXT.get(f.name.rsplit(".", 1)[-1].lower(), "") for f in files)
        named = [lang for lang, _ in sorted(langs.items(), key=lambda kv: (-kv[1], kv[0])) if lang][:3]
        kinds = f" ({', '.join(named)})" if named else ""
        parts = [f"{plural(len(files), 'file')}{kinds}: {_listing([f.name for f in files], 3)}."]
    else:
        parts = [f"Directory {ctx.scope}."]
    if ctx.subdirectories:
        subs = [s.name for s in ctx.subdirectories]
        parts.append(f"Subdirectories: {_listing(subs, 5)}.")
    return " ".join(parts)


# --- manifests ---------------------------------------------------------------

# base.manifests reads them; a Reader reads each directory once. (The name scopes/write.py
# constructs; the class is base.manifests.Reader.)
Manifests = mf.Reader
# Import names whose distribution is named otherwise.
_PY_DISTS = {
    "yaml": "pyyaml", "PIL": "pillow", "sklearn": "scikit-learn", "bs4": "beautifulsoup4",
    "cv2": "opencv-python", "dateutil": "python-dateutil", "jwt": "pyjwt", "dotenv": "python-dotenv",
    "attr": "attrs", "OpenSSL": "pyopenssl", "Crypto": "pycryptodome", "serial": "pyserial",
    "git": "gitpython", "zmq": "pyzmq", "MySQLdb": "mysqlclient", "magic": "python-magic",
    "docx": "python-docx", "google": "protobuf",
}
_FRAMEWORKS = (
    ("python", "django", "django"), ("python", "fastapi", "fastapi"), ("python", "flask", "flask"),
    ("python", "starlette", "starlette"), ("js", "next", "next.js"), ("js", "@angular/core", "angular"),
    ("js", "react", "react"), ("js", "vue", "vue"), ("js", "svelte", "svelte"), ("js", "express", "express"),
    ("js", "@nestjs/core", "nestjs"), ("rust", "axum", "axum"), ("rust", "actix_web", "actix-web"),
    ("rust", "rocket", "rocket"), ("rust", "pyo3", "pyo3"), ("go", "github.com/gin-gonic/gin", "gin"),
    ("go", "github.com/labstack/echo/v4", "echo"), ("go", "github.com/gofiber/fiber/v2", "fiber"),
)


def _test_command(eco: str, section: mf.Section, m: mf.Manifests) -> str | None:
    """The command that runs the tests one ecosystem's manifests in a directory declare."""
    if isinstance(section, mf.Python):
        pytest = section.pytest or "pytest" in section.main or "pytest" in section.extra
        return "pytest" if pytest or m.files & {"pytest.ini", "tox.ini"} else None
    if eco == "rust":
        return "cargo test"
    if eco == "go":
        return "go test ./..."
    test = section.scripts.get("test") if isinstance(section, mf.Js) else None
    return f"{m.locked_by('js') or 'npm'} test" if test is not None and "no test specified" not in test else None


def _nearest(manifests: Manifests, scope: str, ecosystem: str) -> tuple[str, mf.Manifests] | None:
    for d in ancestry(scope):
        if (m := manifests.at(d)).section(ecosystem) is not None:
            return d, m
    return None


def ancestry(scope: str):
    """The scope, its parent, … up to the root "."."""
    while True:
        yield scope
        if scope == ".":
            return
        scope = posixpath.dirname(scope) or "."


def _in(base: str, command: str) -> str:
    return command if base == "." else f"cd {shlex.quote(base)} && {command}"


def _rel(scope: str, base: str) -> str:
    return "." if scope == base else (scope if base == "." else scope[len(base) + 1 :])


# --- derived fields ------------------------------------------------------------


def external(scope: str, facts: ScopeFacts, manifests: Manifests) -> list[str]:
    """Declared dependencies: all of this directory's manifests, and those its imports use."""
    out: dict[str, None] = {}
    for m in manifests.at(scope).sections().values():
        out.update(dict.fromkeys(m.main.values()))
    for eco, name in facts.external:
        for d in ancestry(scope):
            m = manifests.at(d).section(eco)
            if m is None:
                continue
            hit = _declared(eco, name, m)
            if hit:
                out[hit] = None
                break
    return sorted(out)


def _declared(eco: str, name: str, m: mf.Section) -> str | None:
    if eco == "go":
        for table in (m.main, m.extra):
            for path, shown in table.items():
                if name == path or name.startswith(path + "/"):
                    return shown
        return None
    keys = [mf.norm(eco, name)] + ([mf.norm(eco, _PY_DISTS[name])] if eco == "python" and name in _PY_DISTS else [])
    for key in keys:
        if key in m.main:
            return m.main[key]
        if key in m.extra:
            return m.extra[key]
    return None


def testing(scope: str, facts: ScopeFacts, manifests: Manifests) -> list[str]:
    """Commands that run this directory's tests, from its manifests or its test files."""
    out: dict[str, None] = {}
    here = manifests.at(scope)
    for eco, section in here.sections().items():
        if test := _test_command(eco, section, here):
            out[_in(scope, test)] = None
    if here.make_test:
        out[_in(scope, "make test")] = None
    if out:
        return list(out)
    for lang in facts.tests:
        eco = "js" if lang == "js" else lang
        near = _nearest(manifests, scope, eco)
        base = near[0] if near else "."
        rel = _rel(scope, base)
        if lang == "python":
            out[_in(base, f"pytest {shlex.quote(rel)}" if rel != "." else "pytest")] = None
        elif lang == "go":
            out[_in(base, "go test ./..." if rel == "." else f"go test ./{shlex.quote(rel)}")] = None
        elif lang == "rust" and near:
            out[_in(base, "cargo test")] = None
        elif lang == "js" and near and (test := _test_command("js", near[1].js, near[1])):
            out[_in(base, test)] = None
    return list(out)


def project(root: str, root_facts: ScopeFacts | None, manifests: Manifests, languages: list[_core.Language]) -> cf.Project:
    here = manifests.at(".")
    sections = here.sections()
    name = here.name or os.path.basename(root.rstrip("/")) or "project"
    description = here.description or None
    if not description and root_facts:
        readme = next((f.purpose for f in root_facts.files if f.name.lower().startswith("readme") and not is_generic(f.purpose)), None)
        description = readme
    description = first_sentence(description) if description else f"The {name} repository."
    # Context files name the language in lower case ("python", "c++"), as the core's table names it.
    language = languages[0].name.lower() if languages else next((e for e in ("python", "js", "rust", "go") if e in sections), "unknown")
    frameworks = [fw for eco, dep, fw in _FRAMEWORKS if (m := sections.get(eco)) and mf.norm(eco, dep) in m.main]
    out = cf.Project(name=name, description=description, language=language)
    if frameworks:
        out = replace(out, framework=frameworks[0])
    pm = _package_manager(here, sections)
    if pm:
        out = replace(out, package_manager=pm)
    return out


def _package_manager(m: mf.Manifests, sections: dict[str, mf.Section]) -> str | None:
    if pm := m.locked_by():
        return pm
    return next((pm for eco, pm in (("rust", "cargo"), ("go", "go"), ("js", "npm"), ("python", "pip")) if eco in sections), None)


# --- merging -----------------------------------------------------------------


_FIELD = re.compile(r"[.\[]")


def _top(entry: str) -> str:
    return _FIELD.split(entry, maxsplit=1)[0]


def owned(old: cf.ContextFile | None) -> frozenset[str]:
    """The DERIVED fields regeneration may replace in `old`."""
    if old is None:
        return _ALL
    listed = set(old.derived_fields or ())
    out = set()
    for name in DERIVED:
        top, _, sub = name.partition(".")
        value = getattr(old, top)
        if value is UNSET:
            out.add(name)
        elif sub:
            if getattr(value, sub) is UNSET or name in listed or top in listed:
                out.add(name)
        elif name == "summary":
            if "summary" in listed and old.summary == derive_summary(old):
                out.add(name)
        elif name == "evidence":
            if "evidence" in listed and recorded_commit(old.evidence) is not None:
                out.add(name)
        elif name == "maintenance":
            # A fixed text: while it is repoctx's own there is nothing to lose by owning it;
            # any other text was written by someone and is kept (and leaves derived_fields).
            if old.maintenance == MAINTENANCE:
                out.add(name)
        elif name in listed:
            out.add(name)
    return frozenset(out)


_ALL = frozenset(DERIVED)
_PLAIN = ("files", "interfaces", "subdirectories", "testing", "exports", "project", "structure", "evidence")


def merge(old: cf.ContextFile | None, mine: frozenset[str], scope: str, fingerprint: str, now: str,
          derived: dict) -> cf.ContextFile:
    """The context file for `scope`: the derived fields repoctx owns (`mine`, from `owned`),
    the rest of `old` as it is. `derived` maps each DERIVED name but summary to a value or UNSET."""
    base = old or cf.ContextFile(version=1, last_updated=now, fingerprint=fingerprint, scope=scope,
                                 summary="", maintenance=MAINTENANCE)
    changes: dict = {"version": 1, "last_updated": now, "fingerprint": fingerprint, "scope": scope}
    for name in _PLAIN:
        if name in mine:
            changes[name] = derived[name]
    if "files" in mine and old is not None and old.files and derived["files"] is not UNSET:
        changes["files"] = _keep_written_purposes(old.files, derived["files"], derived.get("generic", ()))
    deps = base.dependencies if base.dependencies is not UNSET else cf.Dependencies()
    for sub in ("internal", "external"):
        if f"dependencies.{sub}" in mine:
            deps = replace(deps, **{sub: derived[f"dependencies.{sub}"]})
    changes["dependencies"] = deps if (deps.internal is not UNSET or deps.external is not UNSET) else UNSET
    if "maintenance" in mine:
        changes["maintenance"] = MAINTENANCE
    ctx = replace(base, **changes)
    if "summary" in mine:
        ctx = replace(ctx, summary=derive_summary(ctx))
    listed = [n for n in DERIVED if n in mine and (n == "summary" or changes.get(n, UNSET) is not UNSET
                                                  or (n.startswith("dep") and getattr(deps, n[13:]) is not UNSET))]
    if old is not None and old.derived_fields:
        tops = {_top(n) for n in mine}
        listed += [e for e in old.derived_fields if e not in DERIVED and _top(e) not in tops]
    return replace(ctx, derived_fields=listed or UNSET)


def _keep_written_purposes(old: list[cf.FileEntry], new: list[cf.FileEntry], generic) -> list[cf.FileEntry]:
    """A generic label never replaces a purpose that says more."""
    generic = set(generic)
    if not generic:
        return new
    before = {f.name: f.purpose for f in old}
    return [
        replace(f, purpose=before[f.name])
        if f.name in generic and f.name in before and not is_generic(before[f.name]) else f
        for f in new
    ]


def same_content(new: cf.ContextFile, old: cf.ContextFile | None) -> bool:
    """Equal but for the write time and the stat fingerprint."""
    return old is not None and replace(new, last_updated=old.last_updated, fingerprint=old.fingerprint) == old
