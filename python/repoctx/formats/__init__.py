"""Every file format repoctx reads or writes, owning: its msgspec Structs, its validator (why content
is not valid for it, which proposal.py applies by path), and the bounded parsers every read goes
through (bounded.py: YAML, JSON, TOML within size and depth limits)."""
