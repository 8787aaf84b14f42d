"""Each proposable file's validator, owned by its format (formats/): the path decides which
one judges the content, and each refuses what its format refuses, in its own words."""

from __future__ import annotations

import pytest

from repoctx.formats.proposal import content_problem

SPEC = "---\nid: SPEC-001\ntitle: T\nstatus: draft\n---\nBody\n"


@pytest.mark.parametrize(("rel", "data", "problem"), [
    ("src/.context.yaml", b"version: 9\nsummary: s\n", "unsupported schema version 9 (version 1 is supported)"),
    ("src/.context.yaml", b"- a list\n", "not a valid .context.yaml"),
    (".context.config.yaml", b"- a list\n", "must be a YAML mapping"),
    (".contextia/notes/x.yaml", b"just text\n", "must be a YAML mapping"),
    (".contextia/notes/x.md", b"---\n- a\n---\nbody\n", "frontmatter must be a YAML mapping"),
    (".contextia/system/specs/SPEC-001.md", b"no frontmatter\n", ""),
    (".repoctx/project.yaml", b"- a list\n", ""),
    ("src/.context.yaml", b"\xff\xfe", "not UTF-8 text"),
    ("src/.context.yaml", b"a: [1\n", "not valid YAML"),
])
def test_a_path_is_judged_by_its_formats_validator(rel, data, problem):
    found = content_problem(rel, data)
    assert found is not None and found.startswith(problem)


@pytest.mark.parametrize(("rel", "data"), [
    (".context.config.yaml", b"ignore: [dist]\n"),
    (".contextia/notes/x.md", b"plain markdown, no frontmatter\n"),
    (".contextia/notes/x.yaml", b"a: 1\n"),
    (".contextia/system/specs/SPEC-001.md", SPEC.encode()),
])
def test_valid_content_passes(rel, data):
    assert content_problem(rel, data) is None
