"""Project (Context Tool): `.repoctx/project.yaml`, its `context://` resources, and sessions."""
