"""Which files task context reads (docs/tasks.md, "The index"): every directory the ignore rules
leave, hidden and `build` ones too, but not the tool and vendored directories nobody edits by
hand; and every file the core reads a language of. Hidden and `build` directories stay no scope."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write
from sample_repo import write_context

WORD = "zanzibar_locale"  # said by one file only, wherever the test puts it


def context_paths(repo: Path, task: str) -> list[str]:
    proc = run_cli("context", task, "--json", "--root", str(repo), check=True)
    return [f["path"] for f in json.loads(proc.stdout)["files"]]


def base(repo: Path) -> Path:
    write(repo, "src/app.ts", "export function start(): void {}\n")
    write(repo, ".gitignore", ".ignored/\n")
    return repo


@pytest.mark.parametrize("rel", [
    "docs/.vitepress/config/zh.ts",  # a hidden directory
    ".github/scripts/release.py",
    "build/syntax_mapping.rs",  # a tracked `build` directory: a build script's modules
    "vitest.config.mts",  # TypeScript, though not dotcontext's source
    "lib/index.cts",
])
def test_a_file_in_a_hidden_or_build_directory_or_of_a_language_is_ranked(tmp_path, rel):
    repo = base(tmp_path / "repo")
    write(repo, rel, f"export const {WORD} = 'zh';\n")
    assert context_paths(repo, f"fix the {WORD} setting") == [rel]


@pytest.mark.parametrize("rel", [
    ".git/hooks/post.py",
    ".hg/store.py",
    ".repoctx/notes.py",
    ".idea/workspace.py",
    ".vscode/settings.ts",
    ".yarn/releases/yarn.js",
    "node_modules/pkg/index.js",
    "target/debug/build.rs",
    ".venv/lib/site.py",
    ".ignored/x.py",  # named by .gitignore
])
def test_tool_vendored_and_ignored_directories_are_not_read(tmp_path, rel):
    repo = base(tmp_path / "repo")
    write(repo, rel, f"export const {WORD} = 'zh';\n")
    assert rel not in context_paths(repo, f"fix the {WORD} setting")


@pytest.mark.anyio
async def test_a_gitignore_that_is_a_link_holds_for_files_as_in_a_server_and_one_out_is_never_read(tmp_path):
    """A cold call takes its file filter's rules from the walk, which prunes no directory by a
    `.gitignore` that is a link; the file filter has always applied one that stays in its
    directory (and never read one that leads out). A cold call and a server read the same files."""
    repo, out = base(tmp_path / "repo"), tmp_path / "out"
    write(repo, "lib/rules.txt", "gen_*.py\nout/\n")
    os.symlink("rules.txt", repo / "lib" / ".gitignore")
    write(out, "rules", "*.py\n")
    write(repo, "far/.keep", "")
    os.symlink(out / "rules", repo / "far" / ".gitignore")
    for rel in ["lib/gen_x.py", "lib/kept.py", "lib/out/y.py", "lib/deep/gen_z.py", "far/w.py"]:
        write(repo, rel, f"{WORD} = 1\n")
    task = f"fix the {WORD} setting"
    cold = sorted(context_paths(repo, task))
    async with mcp_client("--root", str(repo)) as client:
        result = await client.call_tool("task_context", {"task": task})
        served = sorted(f["path"] for f in json.loads(result.content[0].text)["files"])
    # `out/` names a directory: the walk prunes none by a link, and a file's own name is no match.
    assert cold == ["far/w.py", "lib/kept.py", "lib/out/y.py"]
    assert served == cold


@pytest.mark.anyio
async def test_a_live_server_ranks_and_follows_a_hidden_directory(tmp_path):
    repo = base(tmp_path / "repo")
    write(repo, "docs/.vitepress/config/en.ts", "export const title = 'Guide';\n")
    task = f"where is {WORD} set"
    async with mcp_client("--root", str(repo)) as client:
        async def paths() -> list[str]:
            result = await client.call_tool("task_context", {"task": task})
            return [f["path"] for f in json.loads(result.content[0].text)["files"]]

        before = await paths()
        write(repo, "docs/.vitepress/config/en.ts", f"export const {WORD} = 'en';\n")
        edited = await paths()
        write(repo, "docs/.vitepress/theme/zh/index.ts", f"export const {WORD} = 'zh';\n")
        made = await paths()
        (repo / "docs/.vitepress/config/en.ts").write_text("export const title = 'Guide';\n")
        back = await paths()
    assert before == []
    assert edited == ["docs/.vitepress/config/en.ts"], "an edit in a hidden directory is seen"
    assert sorted(made) == ["docs/.vitepress/config/en.ts", "docs/.vitepress/theme/zh/index.ts"], \
        "a new directory beneath a hidden one is read"
    assert back == ["docs/.vitepress/theme/zh/index.ts"]


@pytest.mark.anyio
async def test_a_context_file_in_a_hidden_or_build_directory_is_still_no_scope(tmp_path):
    """A server's listing and the freshness of the scopes beside them, before and after hidden and
    `build` directories with context files and code come and go, are those of the tree without
    them: `docs` holds only a hidden directory, so it is not included."""
    repo = base(tmp_path / "repo")
    write_context(repo, "src", "The app.")
    async with mcp_client("--root", str(repo)) as client:
        async def scope_answers() -> list[object]:
            out: list[object] = [json.loads((await client.call_tool("list_contexts", {})).content[0].text)]
            for scope in ["src", "docs"]:
                result = await client.call_tool("check_freshness", {"scope": scope})
                out.append(json.loads(result.content[0].text))
            return out

        without = await scope_answers()
        for d in ["docs/.vitepress", "build"]:
            write(repo, f"{d}/config.ts", "export const x = 1;\n" * 400)
            write_context(repo, d, "Not a scope.")
        with_them = await scope_answers()
        for d in ["docs", "build"]:
            shutil.rmtree(repo / d)
        gone = await scope_answers()
    assert with_them == without
    assert gone == without
