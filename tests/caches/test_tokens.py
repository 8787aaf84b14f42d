"""Token counting: the contracts' bytes/4 and the offline BPE encodings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repoctx import _core
from repoctx.base.tokens import bytes4, counter


def test_bytes4_is_ceil_of_utf8_bytes_over_four():
    assert [bytes4(t) for t in ["", "a", "abcd", "abcde", "é", "日本"]] == [0, 1, 1, 2, 1, 2]


def test_bpe_counts_known_strings():
    assert _core.count_tokens("cl100k", ["hello world", "", "tiktoken is great!"]) == [2, 0, 6]
    assert counter("o200k")("hello world") == 2


def test_unknown_tokenizer_is_refused():
    with pytest.raises(ValueError, match="known: bytes4, o200k, cl100k"):
        counter("gpt2")
    with pytest.raises(ValueError):
        _core.count_tokens("gpt2", ["x"])


@settings(max_examples=60, deadline=None)
@given(a=st.text(max_size=200), b=st.text(max_size=200))
def test_batch_counts_equal_single_counts(a, b):
    for enc in ("o200k", "cl100k"):
        ca, cb, cab = _core.count_tokens(enc, [a, b, a + b])
        assert (ca, cb, cab) == (counter(enc)(a), counter(enc)(b), counter(enc)(a + b))
        assert (cab == 0) == (a + b == "")
        assert cab <= len((a + b).encode())  # every token covers at least one byte
