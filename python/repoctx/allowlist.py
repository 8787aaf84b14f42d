"""Which tools and resources a server lists and accepts: the closed allowlist.

Decided, in this order, by:
- a tools list (`serve --tools`, else `tools:` in .repoctx/config.yaml): exactly
  those tools (a dotted alias names its tool, and the tool's aliases follow it), and
  the resources and prompts of their surfaces only;
- a profile (`serve --profile`, else `profile:` in the config): the tools and
  resources of one surface, or `all`; given together with a tools list, the
  two intersect;
- otherwise the surfaces that have data in this repository, and always scopes (any
  tree has directories to list: a repository without context files yet is where
  `list_contexts` helps most) and control.
Read-only mode then drops every writing tool. Whatever is not enabled (tool,
resource, prompt) is neither listed nor callable nor readable.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from repoctx.formats.config import PROFILES, SURFACES, ConfigError, load

# Where each surface keeps its data, relative to the root; caches live under the cache root;
# control is always on.
DATA_MARKERS = {
    "scopes": (".context.yaml", ".context.config.yaml", ".contextignore"),
    "artifacts": (".contextia",),
    "project": (".repoctx/project.yaml",),
}
# Served by default whatever the repository holds.
ALWAYS_SERVED = ("scopes", "control")
DEFAULT_CACHE_ROOT = ".repoctx/caches"  # when neither --cache-root nor $CONTEXT_CACHE_ROOT is given


class AllowlistError(ValueError):
    """Unknown tool or profile names, or a malformed config: the server refuses to start."""


@dataclass(frozen=True)
class Selection:
    profile: str | None  # as given; None when the default (surfaces with data) applied
    surfaces: tuple[str, ...]
    commands: tuple  # the enabled Commands, in registry order
    resources: tuple  # the enabled Resources

    @property
    def tool_names(self) -> list[str]:
        return [c.tool for c in self.commands]

    @property
    def aliases(self) -> list[str]:
        return [a for c in self.commands for a in c.aliases]


def surfaces_with_data(ws) -> tuple[str, ...]:
    """The surfaces whose files exist in this repository (control always)."""
    found = []
    for surface in SURFACES:
        if surface == "control":
            found.append(surface)
        elif surface == "caches":
            if os.path.isdir(ws.cache_root or os.path.join(ws.root, DEFAULT_CACHE_ROOT)):
                found.append(surface)
        elif any(os.path.lexists(os.path.join(ws.root, m)) for m in DATA_MARKERS[surface]):
            found.append(surface)
    return tuple(found)


@functools.cache
def select(ws) -> Selection:
    """The enabled tools and resources of a server on `ws` (raises AllowlistError).

    Decided once per workspace: a server's allowlist is fixed when it starts, and
    ctxt_capabilities reports that one even if the config changes meanwhile.
    """
    from repoctx.commands import all_commands, all_resources

    try:
        config = load(ws.root)
    except ConfigError as exc:
        raise AllowlistError(str(exc)) from None
    tools = ws.tools if ws.tools is not None else config.tools
    profile = ws.profile if ws.profile is not None else config.profile
    if profile is not None and profile not in PROFILES:
        raise AllowlistError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")

    commands = [c for c in all_commands() if c.tool]
    if profile is not None:
        surfaces = SURFACES if profile == "all" else (profile,)
    else:
        with_data = surfaces_with_data(ws)
        surfaces = tuple(s for s in SURFACES if s in with_data or s in ALWAYS_SERVED)
    if tools is not None:
        wanted = set(tools)
        known = {c.tool for c in commands} | {a for c in commands for a in c.aliases}
        unknown = sorted(wanted - known)
        if unknown:
            raise AllowlistError(f"unknown tool names in the allowlist: {', '.join(unknown)}")
        commands = [c for c in commands if c.tool in wanted or wanted & set(c.aliases)]
        # Closed for resources and prompts too: only the surfaces of the named tools are served
        # (within the profile, if one is given), whether or not they have data. Decided before
        # read-only mode drops writing tools: naming a surface's tool asks for that surface.
        named = {c.surface for c in commands}
        surfaces = tuple(s for s in (SURFACES if profile is None else surfaces) if s in named)
    commands = [
        c for c in commands
        if c.surface in surfaces and not (ws.read_only and c.writes)
    ]
    resources = [r for r in all_resources() if r.surface in surfaces]
    return Selection(profile, tuple(surfaces), tuple(commands), tuple(resources))
