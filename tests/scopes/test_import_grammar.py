"""One import grammar per language: `repoctx init` (each directory's internal dependencies)
and `repoctx project scan` (each module's dependencies) read the same imports in the same
code, so they name the same dependencies. The repository mixes the shapes the two readers
once read differently: `from a import b`, import-like prose in a docstring, a Go `import(`
with no space, a restricted `pub(super) use`, a one-line Rust use tree, TypeScript
`import type` and a file that only re-exports (`export … from`)."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from conftest import run_cli, write

FILES = {
    ".context.config.yaml": "min_tokens: 0\n",
    # Python: two packages, one importing a submodule of the other by `from … import`.
    "core/pyproject.toml": '[project]\nname = "core"\nversion = "0.1"\n',
    "core/core/__init__.py": '"""Core."""\n',
    "core/core/models.py": '"""Models.\n\nimport svc  (prose in a docstring, not an import)\n"""\nimport json\n',
    "svc/pyproject.toml": '[project]\nname = "svc"\nversion = "0.1"\n',
    "svc/svc/__init__.py": '"""Service."""\nfrom core import models\nfrom . import handlers\nimport requests\n',
    "svc/svc/handlers.py": '"""Handlers."""\nfrom core.models import json\n',
    # TypeScript: type-only imports and re-exports (in a file without the word `import`) count.
    "web/package.json": '{"name": "@acme/web", "version": "1.0.0"}\n',
    "web/src/index.ts": "export { x } from '@acme/ui';\nexport const a = 1;\n",
    "web/src/types.ts": "import type { T } from '@acme/types';\nexport type U = T;\n",
    "ui/package.json": '{"name": "@acme/ui", "version": "1.0.0"}\n',
    "ui/src/index.ts": "export const x = 1;\n",
    "types/package.json": '{"name": "@acme/types", "version": "1.0.0"}\n',
    "types/src/index.ts": "export type T = number;\n",
    # Rust: a use tree and a restricted re-export, each naming another crate of the workspace.
    "api/Cargo.toml": '[package]\nname = "api"\nversion = "0.1.0"\n',
    "api/src/lib.rs": "//! Api.\nuse {store::Thing, serde::Serialize};\npub mod net;\npub fn f() {}\n",
    "api/src/net.rs": "//! Net.\npub(super) use wire::Frame;\n",
    "store/Cargo.toml": '[package]\nname = "store"\nversion = "0.1.0"\n',
    "store/src/lib.rs": "//! Store.\npub struct Thing;\n",
    "wire/Cargo.toml": '[package]\nname = "wire"\nversion = "0.1.0"\n',
    "wire/src/lib.rs": "//! Wire.\npub struct Frame;\n",
    # Go: two modules, an import block opened with no space after `import`.
    "tools/go.mod": "module example.com/tools\n\ngo 1.21\n",
    "tools/cmd/main.go": 'package main\n\nimport(\n\t"fmt"\n\t"example.com/gen/util"\n)\n\nfunc main() { fmt.Println(util.X) }\n',
    "gen/go.mod": "module example.com/gen\n\ngo 1.21\n",
    "gen/util/util.go": "package util\n\n// X is x.\nconst X = 1\n",
}

EXPECTED = {
    "svc": ["core"],
    "web": ["types", "ui"],
    "api": ["store", "wire"],
    "tools": ["gen"],
}


def owner(modules: dict[str, str], path: str) -> str | None:
    """The module whose directory holds `path` (the deepest one)."""
    hits = [m for m, p in modules.items() if p in (".", "") or path == p or path.startswith(p + "/")]
    return max(hits, key=lambda m: len(modules[m]), default=None)


def test_init_and_project_scan_name_the_same_dependencies(tmp_path):
    for rel, text in FILES.items():
        write(tmp_path, rel, text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    run_cli("project", "init", cwd=tmp_path, check=True)
    run_cli("init", cwd=tmp_path, check=True)

    project = yaml.safe_load((tmp_path / ".repoctx" / "project.yaml").read_text())["modules"]
    paths = {name: m["path"] for name, m in project.items()}
    by_scan = {name: sorted(m["dependencies"]) for name, m in project.items() if m["dependencies"]}

    found: dict[str, set[str]] = {}
    for ctx in tmp_path.rglob(".context.yaml"):
        scope = ctx.parent.relative_to(tmp_path).as_posix()
        here = owner(paths, scope)
        internal = (yaml.safe_load(ctx.read_text()).get("dependencies") or {}).get("internal") or []
        for dep in internal:
            there = owner(paths, dep)
            if here and there and there != here:
                found.setdefault(here, set()).add(there)
    by_init = {name: sorted(deps) for name, deps in found.items()}

    assert by_scan == EXPECTED
    assert by_init == EXPECTED


# --- go.mod and package.json as init's index reads them (the core's, rust/scopes/sources.rs) ---

SECRET = "OUTSIDE-MANIFEST-SECRET-5e0c7a"

GO_MODS = {
    "plain": "module ex.com/m\n\ngo 1.22\n",
    "tab-and-comment": "module\tex.com/m // comment\n\ngo 1.22\n",
    "block": "// Generated.\nmodule (\n\tex.com/m // the module\n)\n",
    "quoted-bom-crlf": '\ufeffmodule "ex.com/m"\r\ngo 1.22\r\n',
    "last-wins": "module ex.com/old\nmodule ex.com/m\n",
}


def internal_deps(root, scope: str) -> list[str]:
    ctx = yaml.safe_load((root / scope / ".context.yaml").read_text())
    return (ctx.get("dependencies") or {}).get("internal") or []


def go_repo(root, go_mod: str | None) -> None:
    write(root, ".context.config.yaml", "min_tokens: 0\n")
    if go_mod is not None:
        write(root, "go.mod", go_mod)
    write(root, "util/util.go", "package util\n\n// X is x.\nconst X = 1\n")
    write(root, "cmd/main.go", 'package main\n\nimport "ex.com/m/util"\n\nfunc main() { _ = util.X }\n')
    write(root, "web/index.js", "import { x } from '@acme/ui';\nexport const y = x;\n")
    write(root, "ui/index.js", "export const x = 1;\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


@pytest.mark.parametrize("form", list(GO_MODS))
def test_every_go_mod_form_resolves_imports_as_the_plain_one(tmp_path, form):
    """A tab after `module`, a trailing comment, the block form, a quoted path after a byte-order
    mark, two `module` lines: init resolves `ex.com/m/util` to the directory util, as for
    `module ex.com/m`; and `project init` (Python's reader, the same core parser) names the module."""
    go_repo(tmp_path, GO_MODS[form])
    run_cli("init", cwd=tmp_path, check=True)
    assert internal_deps(tmp_path, "cmd") == ["util"]
    run_cli("project", "init", cwd=tmp_path, check=True)
    project = yaml.safe_load((tmp_path / ".repoctx" / "project.yaml").read_text())
    assert project["project"]["name"] == "m"


@pytest.mark.parametrize("where", ["out", "in"])
def test_init_reads_no_manifest_linked_out(tmp_path, where):
    """go.mod and package.json that are links to files outside the repository are not read by
    init (neither by the core's index nor by the manifest reader): their module path and package
    name resolve nothing, and a secret in them reaches no output and no file; init succeeds.
    Links to files inside the repository are followed, by both."""
    repo, out = tmp_path / "repo", tmp_path / "out"
    go_repo(repo, None)
    out.mkdir()
    manifests = {
        "go.mod": f"module ex.com/m\n// {SECRET}\nrequire {SECRET}.example/dep v1.0.0\n",
        "ui/package.json": f'{{"name": "@acme/ui", "description": "{SECRET}", "dependencies": {{"{SECRET}": "1"}}}}',
    }
    for rel, text in manifests.items():
        if where == "out":
            target = out / rel.replace("/", "_")
            target.write_text(text)
        else:
            target = repo / "real" / (rel.replace("/", "_") + ".txt")
            write(repo, target.relative_to(repo).as_posix(), text.replace(SECRET, "inside"))
        os.symlink(target, repo / rel)
    proc = run_cli("init", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    for rel in manifests:
        assert (repo / rel).is_symlink()
    written = list(repo.rglob(".context.yaml"))
    assert written and not [p for p in written if SECRET in p.read_text()]
    followed = where == "in"
    assert ("util" in internal_deps(repo, "cmd")) is followed
    assert ("ui" in internal_deps(repo, "web")) is followed
