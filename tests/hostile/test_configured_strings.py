"""Slow by configuration (issue 32, item 8): every string a configuration file sets is bounded
in one place (formats/bounded.py, MAX_SETTING). An `annotation_prefix` of 30,000 characters
made each command take ~16 s; now it is refused by name and the commands answer at once.
The same bound holds for the other settings (source and test paths, the project name, check
names, `.repoctx/config.yaml` tools, `.context.config.yaml` ignore patterns)."""

from __future__ import annotations

import json
import time

import msgspec
import pytest

from conftest import run_cli, write
from repoctx.formats import artifact, bounded, config
from sample_repo import build_sample_repo

LONG = "@" * 30_000


def test_a_long_annotation_prefix_is_refused_and_costs_nothing(tmp_path):
    repo = build_sample_repo(tmp_path / "repo")
    write(repo, ".contextia/config.yaml", f"project: sample\nannotation_prefix: \"{LONG}\"\n")
    for args in (["artifacts", "check"], ["context", "engine helper"], ["report", "--out", "-"]):
        began = time.monotonic()
        proc = run_cli(*args, "--root", str(repo))
        took = time.monotonic() - began
        assert "Traceback" not in proc.stderr, proc.stderr
        assert took < 10, (args, took)
    proc = run_cli("artifacts", "check", "--root", str(repo))
    assert "annotation_prefix" in proc.stdout + proc.stderr and str(bounded.MAX_SETTING) in proc.stdout + proc.stderr


@pytest.mark.parametrize("field, make", [
    ("project", lambda n: "p" * n), ("annotation_prefix", lambda n: "#" * n), ("source_paths", lambda n: ["s" * n]),
    ("test_paths", lambda n: ["t" * n]), ("checks", lambda n: {"c" * n: "off"}),
])
def test_every_contextia_setting_is_bounded(field, make):
    artifact.parse_config(json.dumps({field: make(bounded.MAX_SETTING)}))  # at the bound: taken
    with pytest.raises(artifact.DocumentError, match=field):
        artifact.parse_config(json.dumps({field: make(bounded.MAX_SETTING + 1)}))


def test_repoctx_and_scan_settings_are_bounded(tmp_path):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"tools": ["x" * 300]}, config.RepoctxConfig)
    write(tmp_path, ".context.config.yaml", f"ignore: [\"{'*' * 300}\", \"build/\"]\n")
    from repoctx.base.workspace import Workspace

    assert Workspace.open(tmp_path).scan_config().ignore[-1:] == ("build/",)
    proc = run_cli("status", "--root", str(tmp_path))
    assert f"at most {bounded.MAX_SETTING} characters" in proc.stdout + proc.stderr
