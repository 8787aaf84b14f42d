"""`.repoctx/config.yaml`: repoctx's settings for one repository.

Only the keys below are read here; other surfaces may keep their own keys in
the same file, so unknown keys are left alone rather than refused.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

from repoctx.base import fs
from repoctx.base.errors import RepoctxError
from repoctx.formats import bounded

CONFIG_FILE = ".repoctx/config.yaml"
SURFACES = ("scopes", "caches", "artifacts", "project", "tasks", "control")
# A profile serves one surface's tools; `propose` serves propose_change, which no contract lists.
PROFILES = (*SURFACES, "propose", "all")
# How tools are listed: safe names (context_resolve, accepted by every host) or the contracts'
# own (context.resolve; some hosts refuse dots). Both are accepted on call either way.
NAMINGS = ("safe", "contract")
MAX_CONFIG_BYTES = 1 << 20

Profile = Literal["scopes", "caches", "artifacts", "project", "tasks", "control", "propose", "all"]
Naming = Literal["safe", "contract"]
Tokenizer = Literal["bytes4", "o200k", "cl100k"]
TOKENIZERS = ("bytes4", "o200k", "cl100k")


class RepoctxConfig(Struct, kw_only=True, omit_defaults=True):
    # Closed allowlist of MCP tools (names or dotted aliases) `repoctx serve` lists and accepts.
    tools: list[bounded.Setting] | None = None
    # Which surfaces' tools and resources to serve when no tools list is given.
    profile: Profile | None = None
    # How tools are listed, and whether answers use the contracts' own states (`serve --names`).
    names: Naming = "safe"
    # How many recorded runs `.repoctx/runs/` keeps; the oldest go first.
    keep_runs: Annotated[int, Meta(ge=1)] = 50
    # How budgets the contracts call approximate are counted (see repoctx/tokens.py).
    tokenizer: Tokenizer = "bytes4"


class ConfigError(RepoctxError):
    code = "config_error"


def load(root: str) -> RepoctxConfig:
    """The config of the repository at `root`; defaults when the file is absent."""
    try:
        raw = fs.read_bytes(root, CONFIG_FILE, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return RepoctxConfig()
    except OSError as exc:  # over the cap, not a file, or a link that leads out: named in strerror
        raise ConfigError(f"{CONFIG_FILE}: cannot be read ({exc.strerror})") from None
    try:
        data = bounded.yaml(raw)
    except bounded.YamlError as exc:
        raise ConfigError(exc.at(CONFIG_FILE)) from None
    if data is None:
        return RepoctxConfig()
    try:
        return msgspec.convert(data, RepoctxConfig)
    except msgspec.ValidationError as exc:
        hint = f"; known tokenizers: {', '.join(TOKENIZERS)}" if str(exc).endswith("`$.tokenizer`") else ""
        raise ConfigError(f"{CONFIG_FILE}: {exc}{hint}") from None
