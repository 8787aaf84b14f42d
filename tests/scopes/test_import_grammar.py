"""One import grammar per language: `repoctx init` (each directory's internal dependencies)
and `repoctx project scan` (each module's dependencies) read the same imports in the same
code, so they name the same dependencies. The repository mixes the shapes the two readers
once read differently: `from a import b`, import-like prose in a docstring, a Go `import(`
with no space, a restricted `pub(super) use`, a one-line Rust use tree, TypeScript
`import type` and a file that only re-exports (`export … from`)."""

from __future__ import annotations

import subprocess

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
