"""docs/tools.md and docs/cli.md are generated from the command registry: the committed
files must be exactly what `python -m repoctx.docgen` writes now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from repoctx import docgen
from repoctx.commands import all_commands, all_prompts, all_resources

CHECKOUT = Path(__file__).resolve().parents[1]  # also right when repoctx is an installed wheel
DOCS = CHECKOUT / "docs"


def test_committed_docs_match_the_registry():
    for name, text in docgen.generate(CHECKOUT).items():
        committed = (DOCS / name).read_text(encoding="utf-8")
        assert committed == text, f"docs/{name} is out of date: run `python -m repoctx.docgen`"


def test_generation_is_deterministic_and_free_of_local_paths():
    first = docgen.generate(CHECKOUT)
    # A fresh interpreter (other hash seed, other import order) writes the same bytes.
    check = subprocess.run([sys.executable, "-m", "repoctx.docgen", "--check", "--checkout", str(CHECKOUT)], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin", "COLUMNS": "37"})
    assert check.returncode == 0, check.stderr
    for text in first.values():
        assert str(Path.home()) not in text and str(DOCS.parent) not in text


def test_every_tool_resource_and_prompt_is_documented():
    tools = docgen.generate(CHECKOUT)["tools.md"]
    for cmd in all_commands():
        if cmd.tool:
            assert f"\n### {cmd.tool}\n" in tools
    for resource in all_resources():
        assert f"### `{resource.uri}`" in tools
    for prompt in all_prompts():
        assert f"\n### {prompt.name}\n" in tools
    cli = docgen.generate(CHECKOUT)["cli.md"]
    for cmd in all_commands():
        if cmd.cli:
            assert f"\n## repoctx {cmd.name}\n" in cli


def test_check_reports_a_stale_file(tmp_path):
    for name, text in docgen.generate(CHECKOUT).items():
        (tmp_path / name).write_text(text + ("edited by hand\n" if name == "cli.md" else ""))
    out = subprocess.run([sys.executable, "-m", "repoctx.docgen", "--check", "--checkout", str(CHECKOUT),
                          "--docs", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "cli.md" in out.stderr and "python -m repoctx.docgen" in out.stderr
