"""docs/tools.md and docs/cli.md are generated from the command registry: the committed
files must be exactly what `python scripts/docgen.py` writes now."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from repoctx.registry.catalog import all_commands, all_prompts, all_resources

CHECKOUT = Path(__file__).resolve().parents[2]  # also right when repoctx is an installed wheel
DOCS = CHECKOUT / "docs"
SCRIPT = CHECKOUT / "scripts" / "docgen.py"  # a script of the checkout, not a module of the wheel
_spec = importlib.util.spec_from_file_location("docgen", SCRIPT)
docgen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docgen)


def test_committed_docs_match_the_registry():
    for name, text in docgen.generate(CHECKOUT).items():
        committed = (DOCS / name).read_text(encoding="utf-8")
        assert committed == text, f"docs/{name} is out of date: run `python scripts/docgen.py`"


def test_generation_is_deterministic_and_free_of_local_paths():
    first = docgen.generate(CHECKOUT)
    # A fresh interpreter (other hash seed, other import order) writes the same bytes.
    check = subprocess.run([sys.executable, str(SCRIPT), "--check", "--checkout", str(CHECKOUT)], capture_output=True, text=True,
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
    out = subprocess.run([sys.executable, str(SCRIPT), "--check", "--checkout", str(CHECKOUT),
                          "--docs", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "cli.md" in out.stderr and "python scripts/docgen.py" in out.stderr


def test_every_resource_and_prompt_has_an_example_reply():
    tools = docgen.generate(CHECKOUT)["tools.md"]
    assert set(docgen.RESOURCE_EXAMPLES) == {r.uri for r in all_resources()}
    assert set(docgen.PROMPT_EXAMPLES) == {p.name for p in all_prompts()}
    for resource in all_resources():
        section = tools.split(f"### `{resource.uri}`\n", 1)[1].split("\n### ", 1)[0]
        uri = docgen.RESOURCE_EXAMPLES[resource.uri][0]
        fence = "```markdown\n" if resource.mime_type == "text/markdown" else "```text\n"
        assert f'"uri": "{uri}"' in section and f"\n{fence}" in section, resource.uri
    for prompt in all_prompts():
        section = tools.split(f"\n### {prompt.name}\n", 1)[1].split("\n### ", 1)[0]
        assert '"method": "prompts/get"' in section and "task_id" in section
    # The replies are the resources' own: the identity sample opens with the fixture's identity.md.
    identity = tools.split("### `contextia://identity`\n", 1)[1]
    assert "```markdown\n# authkit\n" in identity


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in markdown.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_links_in_the_docs_resolve():
    pages = [CHECKOUT / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not followed here
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(CHECKOUT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
                broken.append(f"{page.relative_to(CHECKOUT)}: {target} (no such heading)")
    assert broken == []


def test_readme_shows_every_surface_and_links_its_document():
    readme = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    for doc in ("scopes", "caches", "artifacts", "project-file", "sessions", "tasks", "control", "formats", "tools", "cli"):
        assert f"](docs/{doc}.md" in readme, doc
    for command in ("repoctx status", "repoctx cache build", "repoctx artifacts new", "repoctx project init",
                    "repoctx context", "repoctx validate --run"):
        assert f"$ {command}" in readme, command
