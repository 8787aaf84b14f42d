"""Artifacts (Contextia): specs, decisions, norms and tasks in `.contextia/`, traced to annotated source.
tools.py declares the 12 `mcp_*` tools (log_tools.py holds the session-log ones, over the log files of
session_logs.py); store.py owns the project and the annotation index; resources.py the identity and
index resources and the prompts."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("tools",), "resources": ("resources",), "prompts": ("resources",), "checks": ("tools",),
           "data": ("store",)}
CLI_WORDS = {"artifacts": "tools"}
