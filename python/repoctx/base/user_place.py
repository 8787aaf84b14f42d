"""Directories of this user outside every repository, for what repoctx keeps about a repository
where the repository has no name to plant a link under (the relay's endpoints, the session
databases). Each is used only while it is this user's alone: POSIX, a directory (not a link) of
this user that no other may enter, made 0700; Windows, a directory in the user's profile, kept
to the user by the profile's permissions."""

from __future__ import annotations

import os
import sys


def private_dir(place: str, make: bool) -> str | None:
    """`place` when it is a directory of this user alone (with `make`, made first when missing);
    else None."""
    if make:
        try:
            os.makedirs(os.path.dirname(place), 0o700, exist_ok=True)
            os.mkdir(place, 0o700)
        except FileExistsError:
            pass
    if sys.platform == "win32":
        return place if os.path.isdir(place) else None
    import stat

    try:
        st = os.lstat(place)
    except FileNotFoundError:
        return None
    # Another user's directory (made first in a shared /tmp), a link, or one others may enter: unused.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return place


def state_dir(name: str, make: bool = False) -> str | None:
    """`repoctx/<name>` in the user's place for state kept across restarts: `$XDG_STATE_HOME`
    (else `~/Library/Application Support` on macOS, `~/.local/state` elsewhere), Windows
    `%LOCALAPPDATA%`; None when it is missing (or, with `make`, cannot be made) or not this
    user's alone."""
    if sys.platform == "win32":
        base = local_app_data()
    else:
        home = os.path.expanduser("~")
        mac = sys.platform == "darwin"
        default = os.path.join(home, "Library", "Application Support") if mac else os.path.join(home, ".local", "state")
        base = os.environ.get("XDG_STATE_HOME") or default
    return None if not base else private_dir(os.path.join(base, "repoctx", name), make)


def local_app_data() -> str | None:
    """Windows' per-user place for local data. Some hosts start MCP servers with a short list of
    variables that can lack LOCALAPPDATA: the profile's default place then, where a process that
    has it finds the same."""
    profile = os.environ.get("USERPROFILE")
    return os.environ.get("LOCALAPPDATA") or (os.path.join(profile, "AppData", "Local") if profile else None)
