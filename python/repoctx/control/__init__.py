"""Control (ctxt): what repoctx serves and whether it holds, proposals, runs and client set-up."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("introspect", "proposals", "runs", "clients"), "checks": ("introspect", "proposals")}
CLI_WORDS = {"self": "introspect", "schema": "introspect", "capabilities": "introspect", "validate": "introspect",
             "propose": "proposals", "proposals": "proposals", "runs": "runs", "install": "clients", "uninstall": "clients",
             "agent": "clients"}
