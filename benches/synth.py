"""Deterministic synthetic monorepos of any size.

A tree of packages in several languages, with realistic file sizes (most a few
kilobytes, a long tail of large ones), nesting depths of 1 to 7, nested
`.gitignore` files with ignored build output beside the sources, and a
`.context.yaml` in about half of the directories. The same seed and size give
the same tree, byte for byte (mtimes aside).
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

LANGS = {
    "py": ('"""Module {n}."""\n\n', "def func_{i}(x):\n    return x + {i}\n\n"),
    "rs": ("//! Module {n}.\n\n", "pub fn func_{i}(x: u64) -> u64 {{ x + {i} }}\n\n"),
    "ts": ("// Module {n}.\n\n", "export function func{i}(x: number): number {{ return x + {i}; }}\n\n"),
    "go": ("// Package {n}.\npackage main\n\n", "func Func{i}(x int) int {{ return x + {i} }}\n\n"),
    "md": ("# {n}\n\n", "Paragraph {i} of the documentation.\n\n"),
}
CONTEXT = (
    'version: 1\nlast_updated: "2026-01-01T00:00:00Z"\nfingerprint: "00000000"\nscope: "{scope}"\n'
    'summary: "Synthetic package {scope}."\nmaintenance: "Regenerate with repoctx regen."\n'
)


def _size(rng: random.Random) -> int:
    # Lognormal around 2.5 KB, capped at 200 KB: the shape of real source trees.
    return min(int(rng.lognormvariate(7.8, 1.0)), 200_000)


def _body(lang: str, name: str, size: int) -> str:
    head, unit = LANGS[lang]
    parts, total, i = [head.format(n=name)], 0, 0
    while total < size:
        piece = unit.format(i=i)
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)


def generate(root: Path, files: int = 100_000, seed: int = 0, git: bool = True) -> Path:
    """Write the tree under `root` (which must not exist) and, with `git`, commit it."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    dirs_wanted = max(1, files // 11)  # about 9,000 directories for 100,000 files
    directories: list[str] = ["."]
    while len(directories) < dirs_wanted:
        parent = rng.choice(directories)
        if parent.count("/") >= 6:
            continue
        directories.append(f"{parent}/d{len(directories)}" if parent != "." else f"pkg{len(directories)}")
    for d in directories:
        (root / d).mkdir(parents=True, exist_ok=True)
    langs = list(LANGS)
    for n in range(files):
        d = rng.choice(directories)
        lang = rng.choice(langs)
        path = root / d / f"f{n}.{lang}"
        path.write_text(_body(lang, f"{d}/f{n}", _size(rng)))
    for i, d in enumerate(directories):
        if i % 2 == 0:
            (root / d / ".context.yaml").write_text(CONTEXT.format(scope=d))
        if i % 50 == 1:
            # Build output beside the sources, ignored by a nested .gitignore.
            (root / d / ".gitignore").write_text("out/\n*.log\n")
            (root / d / "out").mkdir()
            for j in range(10):
                (root / d / "out" / f"gen{j}.js").write_text("x" * 1000)
            (root / d / "debug.log").write_text("log\n")
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "node_modules/dep").mkdir(parents=True)
    (root / "node_modules/dep/index.js").write_text("module.exports = 1;\n")
    if git:
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
               "GIT_COMMITTER_EMAIL": "b@b"}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "synthetic tree"]):
            subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return root


def tree(files: int, seed: int = 0, git: bool = True, base: Path | None = None) -> Path:
    """The cached tree for (files, seed), generated on first use under benches/trees/
    (without `git`, no repository is made: faster for the largest trees)."""
    base = base or Path(__file__).parent / "trees"
    root = base / f"synth-{files}-{seed}{'' if git else '-nogit'}"
    done = root / ".synth-complete"
    if not done.exists():
        if root.exists():
            subprocess.run(["rm", "-rf", str(root)], check=True)
        generate(root, files, seed, git=git)
        done.write_text("ok\n")
        if git:
            exclude = root / ".git" / "info" / "exclude"
            exclude.write_text(exclude.read_text() + ".synth-complete\n")
    return root
