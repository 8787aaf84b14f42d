"""A small polyglot monorepo for the project surface: a Cargo workspace, pnpm
workspaces, a Go service under a container directory, a Python package in a
src layout, tests, and directories without code. Also the golden-file helper."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write

GOLDEN = Path(__file__).parent / "golden" / "project"
NOW = "2026-03-01T09:00:00Z"

FILES = {
    "pyproject.toml": '[project]\nname = "acme"\ndescription = "Acme storefront and tools."\n'
                      'requires-python = ">=3.11"\ndependencies = ["fastapi>=0.110", "httpx"]\n',
    "uv.lock": "version = 1\n",
    "package.json": '{"name": "acme-web-root", "private": true, "packageManager": "pnpm@9.1.0",\n'
                    ' "engines": {"node": ">=20"}}\n',
    "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n',
    ".gitignore": "generated/\n",
    "README.md": "# Acme\n",
    "docs/guide.md": "# Guide\n\nHow it fits together.\n",
    "generated/out.py": "X = 1\n",
    # Rust
    "crates/core/Cargo.toml": '[package]\nname = "acme-core"\nversion = "0.1.0"\nedition = "2021"\n'
                              'rust-version = "1.75"\ndescription = "Pricing rules."\n',
    "crates/core/src/lib.rs": "pub mod price;\npub use price::total;\n",
    "crates/core/src/price.rs": "pub fn total(xs: &[u64]) -> u64 {\n    xs.iter().sum()\n}\n" * 5,
    "crates/cli/Cargo.toml": '[package]\nname = "acme-cli"\nversion = "0.1.0"\nedition = "2021"\n\n'
                             '[dependencies]\nacme-core = { path = "../core" }\n',
    "crates/cli/src/main.rs": "use acme_core::total;\n\nfn main() {\n    println!(\"{}\", total(&[1, 2]));\n}\n",
    # Node (pnpm workspaces)
    "packages/ui/package.json": '{"name": "@acme/ui", "description": "Shared React components.",\n'
                                ' "dependencies": {"react": "^18.2.0"}, "devDependencies": {"typescript": "^5.4.0"}}\n',
    "packages/ui/tsconfig.json": "{}\n",
    "packages/ui/src/index.ts": "export { Button } from './button';\n",
    "packages/ui/src/button.tsx": "import React from 'react';\n\nexport const Button = () => null;\n" * 3,
    "packages/ui/src/button.test.tsx": "import { Button } from './button';\n",
    "packages/web/package.json": '{"name": "@acme/web", "description": "The storefront."}\n',
    "packages/web/src/main.ts": "import { Button } from '@acme/ui';\nimport { format } from './format';\n",
    "packages/web/src/format.ts": "export const format = (n: number) => `${n}`;\n",
    # Go, inside a container directory
    "services/api/go.mod": "module example.com/acme/api\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.1\n",
    "services/api/main.go": 'package main\n\nimport (\n\t"fmt"\n\t"example.com/acme/api/internal/auth"\n)\n\n'
                            'func main() { fmt.Println(auth.Check()) }\n',
    "services/api/internal/auth/auth.go": "package auth\n\nfunc Check() bool { return true }\n",
    "services/api/internal/auth/auth_test.go": 'package auth\n\nimport "testing"\n\nfunc TestCheck(t *testing.T) {}\n',
    # Python, src layout
    "src/acme_tools/__init__.py": '"""Operations tooling: imports, exports and the admin API."""\n',
    "src/acme_tools/server.py": "from fastapi import FastAPI\n\nfrom acme_tools import db\n\napp = FastAPI()\n" * 4,
    "src/acme_tools/db.py": "import sqlite3\n",
    "tests/test_tools.py": "from acme_tools.server import app\n\n\ndef test_app():\n    assert app\n",
}


def build_project_fixture(root: Path) -> Path:
    for rel, text in FILES.items():
        write(root, rel, text)
    # Fixed mtimes keep any stat-based answers stable.
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(dirpath, name), ns=(1_700_000_000_000_000_000,) * 2)
    return root


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/project/<name>; REPOCTX_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("REPOCTX_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run with REPOCTX_UPDATE_GOLDEN=1 once and review it"
    assert text == path.read_text(), f"{name} differs from its golden file"
