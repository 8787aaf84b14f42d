"""Project (Context Tool): `.repoctx/project.yaml`, its `context://` resources, and sessions."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("overview", "sessions"), "resources": ("overview", "sessions"),
           "checks": ("overview", "sessions"), "data": ("overview",)}
CLI_WORDS = {"project": "overview", "sessions": "sessions"}
