"""One error base: every exception class repoctx's Python defines is a RepoctxError with a code
and a message, except the system's refusals, which stay OSErrors so their errno travels."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import repoctx
from repoctx.base.errors import RepoctxError


def _defined_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(repoctx.__path__, "repoctx."):
        if info.name == "repoctx.__main__":
            continue
        module = importlib.import_module(info.name)
        found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, BaseException) and cls.__module__ == info.name]
    return found


EXCEPTIONS = _defined_exceptions()


def test_the_search_finds_the_errors_it_judges():
    names = {cls.__name__ for cls in EXCEPTIONS}
    assert {"CacheError", "ProposalError", "YamlError", "ScopeProblem", "AllowlistError"} <= names


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_error_is_a_repoctx_error_or_the_systems_refusal(cls):
    assert issubclass(cls, RepoctxError) != issubclass(cls, OSError), cls.__mro__


def test_a_refusal_carries_its_code_and_message_as_named_fields():
    from repoctx.caches.engine import CacheError
    from repoctx.control.proposals import ProposalError
    from repoctx.formats.bounded import YamlError

    cache = CacheError("cache_missing")
    assert (cache.code, cache.message) == ("cache_missing", str(cache)) and cache.message != "cache_missing"
    assert (CacheError("io_error", "disk full").code, CacheError("io_error", "disk full").message) == (
        "io_error", "disk full")
    proposal = ProposalError("not_found", "No proposal x", ["a"])
    assert (proposal.code, proposal.message, proposal.problems) == ("not_found", "No proposal x", ["a"])
    yaml = YamlError("tab", 3, 5, True)
    assert (yaml.reason, yaml.line, yaml.column, yaml.syntax) == ("tab", 3, 5, True)
    assert not isinstance(yaml, ValueError) and yaml.at("a.yaml") == "a.yaml:3:5: YAML syntax error: tab"
