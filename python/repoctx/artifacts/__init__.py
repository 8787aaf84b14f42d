"""Artifacts (Contextia): specs, decisions, norms and tasks in `.contextia/`, traced to annotated source."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("tools",), "resources": ("resources",), "prompts": ("resources",), "checks": ("tools",),
           "data": ("store",)}
CLI_WORDS = {"artifacts": "tools"}
