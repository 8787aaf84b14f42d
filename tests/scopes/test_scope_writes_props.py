"""Properties of the scope writers: the YAML the core writes reads back as the same
data through PyYAML and through the core's own reader, whatever the text; Python
exports found by the core agree with a plain-Python oracle; update_context never
writes outside the root."""

from __future__ import annotations

import json
import os

import msgspec
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoctx import _core
from repoctx.base.workspace import Workspace
from repoctx.registry.catalog import by_tool_name
from repoctx.views.server import call

text = st.text(max_size=40)
context = st.fixed_dictionaries(
    {
        "version": st.just(1),
        "last_updated": text,
        "fingerprint": text,
        "scope": text,
        "summary": text,
        "maintenance": text,
    },
    optional={
        "files": st.lists(st.fixed_dictionaries({"name": text, "purpose": text}, optional={"test_file": text}), max_size=3),
        "todos": st.lists(text, max_size=3),
        "dependencies": st.fixed_dictionaries({}, optional={"internal": st.lists(text, max_size=2),
                                                            "external": st.lists(text, max_size=2)}),
        "evidence": st.fixed_dictionaries({"collected_at": text}, optional={
            "test_count": st.integers(-(2**53), 2**53), "coverage_percent": st.floats(0, 100)}),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=context)
def test_yaml_written_reads_back_as_the_same_data(tmp_path, data):
    written = _core.to_yaml(msgspec.json.encode(data))
    assert yaml.load(written, Loader=yaml.CSafeLoader) == data
    path = tmp_path / "c.yaml"
    path.write_text(written, encoding="utf-8")
    [read] = _core.read_yaml_many(str(tmp_path), ["c.yaml"], 1 << 20)
    assert read.kind == "json" and json.loads(read.text) == data
    assert list(yaml.load(written, Loader=yaml.CSafeLoader)) == list(data)  # keys keep their order


name = st.from_regex(r"_?[a-z][a-z0-9_]{0,8}", fullmatch=True)
item = st.tuples(st.sampled_from(["def", "async def", "class", "nested", "string"]), name, st.booleans())


def module(items) -> tuple[str, list[str], list[str]]:
    """Python source, and the exports and documented exports the core should report, in order."""
    lines, exports, documented = ['"""A generated module."""', ""], [], []
    for kind, ident, doc in items:
        body = '    """Doc line."""' if doc else "    pass"
        sig = None
        if kind in ("def", "async def"):
            lines += [f"{kind} {ident}(x, y=1):", body, ""]
            sig = f"{ident}(x, y=1)"
        elif kind == "class":
            lines += [f"class {ident}(Base):", body, ""]
            sig = f"class {ident}(Base)"
        elif kind == "nested":
            lines += ["if True:", f"    def {ident}():", "        pass", ""]
        else:
            lines += ['TEXT = """', f"def {ident}(fake):", '"""', ""]
        if sig and not ident.startswith("_") and sig not in exports:  # the first of equal signatures counts
            exports.append(sig)
            if doc:
                documented.append(sig)
    return "\n".join(lines) + "\n", exports, documented


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(item, max_size=12))
def test_python_exports_agree_with_an_oracle(tmp_path_factory, items):
    root = tmp_path_factory.mktemp("py")
    source, exports, documented = module(items)
    (root / "m.py").write_text(source)
    [facts] = json.loads(_core.ScopeSources(str(root), ["."]).extract(["."]))
    assert facts["exports"] == exports[:50]
    assert [i["name"] for i in facts["interfaces"]] == documented[:25]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=st.lists(st.sampled_from(["..", ".", "src", "/", "\\", "etc", "%2e%2e", "\x00", "é"]), max_size=6).map("".join))
def test_update_context_never_writes_outside_the_root(tmp_path_factory, scope):
    base = tmp_path_factory.mktemp("confine")
    (base / "repo/src").mkdir(parents=True)
    (base / "etc").mkdir()
    ws = Workspace.open(base / "repo")
    call(ws, by_tool_name()["update_context"], {"scope": scope, "fields": {"todos": ["x"]}})
    outside = [os.path.join(d, f) for d, _, files in os.walk(base) for f in files if ".context.yaml" in f]
    assert all(path.startswith(str(base / "repo") + os.sep) for path in outside), outside
