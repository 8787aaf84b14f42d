"""Token counts for budgets.

Where a contract fixes the count (the context engine's documents, dotcontext's
directory estimate) it is ceil(UTF-8 bytes / 4) and stays so. Where a contract
calls its budget approximate (`mcp_context`, repoctx's own bundles) the
`tokenizer` of `.repoctx/config.yaml` chooses: `bytes4` (the default), or a real
BPE count in the Rust core, `o200k` or `cl100k`, which works offline.
"""

from __future__ import annotations

from collections.abc import Callable

from repoctx.formats.config import TOKENIZERS


def bytes4(text: str) -> int:
    return -(-len(text.encode()) // 4)


def counter(tokenizer: str = "bytes4") -> Callable[[str], int]:
    """A function counting a text's tokens with `tokenizer`."""
    if tokenizer == "bytes4":
        return bytes4
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; known: {', '.join(TOKENIZERS)}")
    from repoctx import _core

    return lambda text: _core.count_tokens(tokenizer, [text])[0]
