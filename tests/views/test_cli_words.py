"""The CLI imports only the module of the command it runs: the table that says
which module declares each first word must match the registry."""

from __future__ import annotations

import importlib
import subprocess
import sys

from repoctx.registry.catalog import PACKAGES, all_commands, declared


def test_every_first_word_maps_to_the_module_declaring_it():
    owners: dict[str, str] = {}
    for package in PACKAGES:
        init = importlib.import_module(f"repoctx.{package}")
        for word, module in init.CLI_WORDS.items():
            assert word not in owners, f"{word} is claimed by {owners[word]} and {package}"
            owners[word] = f"{package}.{module}"
        for module in init.MODULES["commands"]:
            for cmd in declared(f"{package}.{module}", "commands"):
                if cmd.cli:
                    assert owners.get(cmd.name.split()[0]) == f"{package}.{module}", cmd.name
    assert set(owners) == {c.name.split()[0] for c in all_commands() if c.cli}


def test_a_command_without_a_cli_view_is_the_mcp_form_of_a_cli_command():
    commands = all_commands()
    mcp_only = [c for c in commands if c.cli is None]
    assert mcp_only, "the fixed forms of control and the caches have no CLI view of their own"
    for cmd in mcp_only:
        assert cmd.tool and any(c.name == cmd.name and c.cli for c in commands), cmd.tool
        assert cmd.handler.fixed, cmd.tool  # a fixed form of its CLI twin (base/command.fixed_form)


def test_version_and_a_scopes_command_import_no_other_surface(tmp_path):
    probe = (
        "import sys, runpy; sys.argv = ['repoctx'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('repoctx', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "mods = sorted(m for m in sys.modules if m.startswith(('repoctx.', 'mcp', 'pydantic')))\n"
        "print('MODULES', ' '.join(mods), file=sys.stderr)\n"
    )
    version = subprocess.run([sys.executable, "-c", probe, "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("repoctx ")
    assert version.stderr.split("MODULES")[1].split() == []
    status = subprocess.run([sys.executable, "-c", probe, "status", "--json", "--root", str(tmp_path)],
                            capture_output=True, text=True)
    loaded = status.stderr.split("MODULES")[1].split()
    assert "repoctx.scopes.read" in loaded
    assert not [m for m in loaded if m.startswith(("mcp", "pydantic", "repoctx.caches.engine", "repoctx.artifacts.tools", "repoctx.views.server"))]
