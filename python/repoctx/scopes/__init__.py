"""Scopes (dotcontext): a `.context.yaml` per directory, read, judged fresh or stale, and written."""
