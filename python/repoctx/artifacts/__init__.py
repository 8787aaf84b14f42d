"""Artifacts (Contextia): specs, decisions, norms and tasks in `.contextia/`, traced to annotated source."""
