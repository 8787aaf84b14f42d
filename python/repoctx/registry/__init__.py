"""The registry: the catalog that names every surface's modules, and the allowlist a server applies."""
