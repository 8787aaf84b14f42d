"""How the human views say a count: "1 context file", "2 directories", "0 scopes"."""

from __future__ import annotations

# Nouns whose plural is not the noun and an "s".
_IRREGULAR = {"directory": "directories", "entry": "entries", "info": "info", "match": "matches",
              "summary": "summaries"}


def plural(n: int, noun: str) -> str:
    """`n` and the noun, plural unless n is 1. The noun's last word is inflected, so
    "context file" gives "context files"."""
    if n == 1:
        return f"{n} {noun}"
    head, _, last = noun.rpartition(" ")
    last = _IRREGULAR.get(last, last + "s")
    return f"{n} {head} {last}" if head else f"{n} {last}"
