"""The one base of repoctx's own errors, and the one shape of a failure: a code and a message.

Every refusal a layer raises for the layer above to answer (a scope that cannot be served, a
proposal that does not apply, a cache the contract refuses, YAML the bounded reader refuses)
is a RepoctxError: its `code` says the kind in a word a contract can carry (control's
envelope, the context engine's error object), its `message` says it to a person, and any
further facts are named fields of the subclass, never positions in `args`. Each contract
still answers in its own wire shape; this is what they are made from. A leaf: it imports
nothing of repoctx.
"""

from __future__ import annotations


class RepoctxError(Exception):
    """A refusal with a code and a message. A subclass sets its default `code` as a class
    attribute and adds named fields of its own."""

    code: str = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
