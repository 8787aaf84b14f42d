"""Which tools and resources a server accepts and lists: the closed allowlist.

What a server accepts is decided once, in this order, by:
- a tools list (`serve --tools`, else `tools:` in .repoctx/config.yaml): exactly
  those tools (a dotted contract name names its tool), and the resources and
  prompts of their surfaces only;
- a profile (`serve --profile`, else `profile:` in the config): the tools and
  resources of one surface, `propose` (propose_change, which no contract lists), or
  `all`; given together with a tools list, the two intersect;
- otherwise every contract's tools and resources (not propose_change).
Read-only mode then drops every writing tool. Whatever is not accepted (tool,
resource, prompt) is neither listed nor callable nor readable.

What it lists is what it accepts, except by default: then only the surfaces that have
data in this repository are listed (a short tool list is worth a lot to an agent), and
always scopes, tasks (any repository has source to rank) and control, and the artifacts'
tools (their answer says how to start a project). A call to an accepted tool that is not listed gets its
contract's own answer (cache_missing, "No Contextia project found…"), and when the data
appears the server lists the surface and says so (server.py).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from repoctx.base.command import Command, Resource
from repoctx.base.errors import RepoctxError
from repoctx.base.workspace import Workspace
from repoctx.formats.config import NAMINGS, PROFILES, SURFACES, ConfigError, load

# Listed by default whatever the repository holds.
ALWAYS_SERVED = ("scopes", "tasks", "control")
# Tools listed by default before their surface has data: an agent sees Contextia's 12 tools and
# their "No Contextia project found… run init" answer until `.contextia/` exists (its resources
# and prompts still wait for the data).
TOOLS_ALWAYS_LISTED = ("artifacts",)


class AllowlistError(RepoctxError):
    """Unknown tool or profile names, or a malformed config: the server refuses to start."""


@dataclass(frozen=True)
class Selection:
    profile: str | None  # as given; None when the default applied
    surfaces: tuple[str, ...]
    commands: tuple[Command, ...]  # the Commands a call may name, in registry order
    resources: tuple[Resource, ...]  # the Resources a read may name
    names: str  # "safe" (context_resolve) or "contract" (context.resolve): how tools are listed
    by_data: bool  # list only the surfaces with data (no tools list and no profile given)

    def listed(self, with_data: tuple[str, ...]) -> Listing:
        """What to list now: everything accepted, or by default the surfaces `with_data` (the
        catalog's surfaces_with_data) and those always served."""
        if not self.by_data:
            return Listing(self.surfaces, self.commands, self.resources, self.names)
        shown = set(with_data) | set(ALWAYS_SERVED)
        return Listing(
            tuple(s for s in self.surfaces if s in shown),
            tuple(c for c in self.commands if c.surface in shown or c.surface in TOOLS_ALWAYS_LISTED),
            tuple(r for r in self.resources if r.surface in shown),
            self.names,
        )


@dataclass(frozen=True)
class Listing:
    surfaces: tuple[str, ...]
    commands: tuple[Command, ...]
    resources: tuple[Resource, ...]
    names: str

    @property
    def tool_names(self) -> list[str]:
        return [c.listed_name(self.names) for c in self.commands]

    @property
    def aliases(self) -> list[str]:
        """The other names the listed tools answer to."""
        return [n for c in self.commands for n in (c.tool, *c.aliases) if n != c.listed_name(self.names)]


def _surfaces_of(profiles: Collection[str]) -> tuple[str, ...]:
    return tuple(s for s in SURFACES if s in profiles or (s == "control" and "propose" in profiles))


def select(ws: Workspace, all_commands: list[Command], all_resources: list[Resource]) -> Selection:
    """What a server on `ws` accepts of every command and resource (raises AllowlistError)."""
    try:
        config = load(ws.root)
    except ConfigError as exc:
        raise AllowlistError(str(exc)) from None
    tools = ws.tools if ws.tools is not None else config.tools
    profile = ws.profile if ws.profile is not None else config.profile
    names = ws.names if ws.names is not None else config.names
    if profile is not None and profile not in PROFILES:
        raise AllowlistError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    if names not in NAMINGS:
        raise AllowlistError(f"unknown naming {names!r}; names: {', '.join(NAMINGS)}")

    commands = [c for c in all_commands if c.tool]
    profiles = PROFILES if profile == "all" else (profile,) if profile is not None else SURFACES
    if tools is not None:
        wanted = set(tools)
        known = {c.tool for c in commands} | {a for c in commands for a in c.aliases}
        unknown = sorted(wanted - known)
        if unknown:
            raise AllowlistError(f"unknown tool names in the allowlist: {', '.join(unknown)}")
        commands = [c for c in commands if c.tool in wanted or wanted & set(c.aliases)]
        if profile is not None:
            commands = [c for c in commands if c.profile in profiles]
        # Closed for resources and prompts too: only the surfaces of the named tools are served
        # (within the profile, if one is given), whether or not they have data. Decided before
        # read-only mode drops writing tools: naming a surface's tool asks for that surface.
        named = {c.surface for c in commands}
        surfaces = tuple(s for s in SURFACES if s in named)
    else:
        commands = [c for c in commands if c.profile in profiles]
        surfaces = _surfaces_of(profiles)
    commands = [c for c in commands if not (ws.read_only and c.writes)]
    resources = [r for r in all_resources if r.surface in surfaces]
    return Selection(profile, surfaces, tuple(commands), tuple(resources), names,
                     by_data=tools is None and profile is None)
