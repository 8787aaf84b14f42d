"""base/rootfind.py as a property: on any chain of directories with markers at any depths, the
root is the nearest marked directory at or above the start that no ceiling hides; else the start."""

from __future__ import annotations

import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from repoctx.base.rootfind import MARKERS, find_root

DEPTH = 6


@settings(max_examples=60, deadline=None)
@given(
    marks=st.dictionaries(st.integers(0, DEPTH), st.sampled_from(MARKERS), max_size=3),
    start=st.integers(0, DEPTH),
    ceiling=st.none() | st.integers(0, DEPTH),
)
def test_the_nearest_marked_directory_below_the_ceiling_is_the_root(marks, start, ceiling):
    with tempfile.TemporaryDirectory() as top:
        top = os.path.realpath(top)
        chain = [os.path.join(top, *(f"d{i}" for i in range(1, n + 1))) for n in range(DEPTH + 1)]
        os.makedirs(chain[-1])
        for depth, marker in marks.items():
            os.mkdir(os.path.join(chain[depth], marker))
        # The test's own directory is the outermost ceiling, so nothing above it counts.
        env = {"REPOCTX_CEILING_DIRECTORIES": os.pathsep.join(
            [os.path.dirname(top)] + ([chain[ceiling]] if ceiling is not None else []))}
        lowest = ceiling + 1 if ceiling is not None and ceiling < start else 0
        marked = [d for d in range(start, lowest - 1, -1) if d in marks]
        choice = find_root(chain[start], env)
        assert choice.root == (chain[marked[0]] if marked else chain[start])
        assert ("holding" in choice.reason) == bool(marked)
