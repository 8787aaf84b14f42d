"""The CLI imports only the module of the command it runs: the table that says
which module declares each first word must match the registry."""

from __future__ import annotations

import subprocess
import sys

from repoctx.commands import CLI_WORDS, COMMAND_MODULES, all_commands


def test_every_first_word_maps_to_the_module_declaring_it():
    declared = {}
    for cmd in all_commands():
        if cmd.cli:
            declared.setdefault(cmd.name.split()[0], set()).add(cmd.handler.__module__.split(".")[1])
    assert set(declared) == set(CLI_WORDS)
    for word, modules in declared.items():
        # A module may delegate handlers to helpers, but the commands come from its COMMANDS.
        assert CLI_WORDS[word] in COMMAND_MODULES
        owner = __import__(f"repoctx.{CLI_WORDS[word]}", fromlist=["COMMANDS"])
        assert any(c.name.split()[0] == word for c in owner.COMMANDS), word


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
    assert "repoctx.scopes" in loaded
    assert not [m for m in loaded if m.startswith(("mcp", "pydantic", "repoctx.caches", "repoctx.artifacts", "repoctx.server"))]
