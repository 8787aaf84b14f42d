"""Caches (the context engine): document caches built, verified and resolved under a token budget."""
