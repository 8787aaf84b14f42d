"""Caches (the context engine): document caches built, verified and resolved under a token budget."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("engine",), "checks": ("engine",), "data": ("engine",)}
CLI_WORDS = {"resolve": "engine", "cache": "engine"}
