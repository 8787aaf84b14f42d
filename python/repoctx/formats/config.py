"""`.repoctx/config.yaml`: repoctx's settings for one repository.

Only the keys below are read here; other surfaces may keep their own keys in
the same file, so unknown keys are left alone rather than refused.
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

CONFIG_FILE = ".repoctx/config.yaml"
SURFACES = ("scopes", "caches", "artifacts", "project", "control")
PROFILES = (*SURFACES, "all")
MAX_CONFIG_BYTES = 1 << 20

Profile = Literal["scopes", "caches", "artifacts", "project", "control", "all"]
Tokenizer = Literal["bytes4", "o200k", "cl100k"]
TOKENIZERS = ("bytes4", "o200k", "cl100k")


class RepoctxConfig(Struct, kw_only=True, omit_defaults=True):
    # Closed allowlist of MCP tools (names or dotted aliases) `repoctx serve` lists and accepts.
    tools: list[str] | None = None
    # Which surfaces' tools and resources to serve when no tools list is given.
    profile: Profile | None = None
    # How many recorded runs `.repoctx/runs/` keeps; the oldest go first.
    keep_runs: Annotated[int, Meta(ge=1)] = 50
    # How budgets the contracts call approximate are counted (see repoctx/tokens.py).
    tokenizer: Tokenizer = "bytes4"


class ConfigError(Exception):
    pass


def load(root: str) -> RepoctxConfig:
    """The config of the repository at `root`; defaults when the file is absent."""
    import yaml

    path = os.path.join(root, CONFIG_FILE)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return RepoctxConfig()
    except OSError as exc:
        raise ConfigError(f"{CONFIG_FILE}: cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{CONFIG_FILE}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_FILE}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if data is None:
        return RepoctxConfig()
    try:
        return msgspec.convert(data, RepoctxConfig)
    except msgspec.ValidationError as exc:
        hint = f"; known tokenizers: {', '.join(TOKENIZERS)}" if str(exc).endswith("`$.tokenizer`") else ""
        raise ConfigError(f"{CONFIG_FILE}: {exc}{hint}") from None
