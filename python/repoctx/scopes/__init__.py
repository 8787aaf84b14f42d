"""Scopes (dotcontext): a `.context.yaml` per directory, read, judged fresh or stale, and written."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("read", "write"), "checks": ("checks",), "data": ("read",)}
CLI_WORDS = {"status": "read", "check": "read", "show": "read", "init": "write", "regen": "write", "rehash": "write",
             "update": "write", "scopes": "write"}
