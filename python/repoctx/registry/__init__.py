"""The registry: the catalog that names every surface's modules and stamps what they declare with
their surface, and the allowlist a server applies (what it accepts and lists)."""
