"""One name per directory for files kept outside it, in places every process of the user shares
(the relay's endpoints, Windows' lock files): its real path hashed, case folded where the file
system folds it, so every spelling of the directory meets the same file."""

from __future__ import annotations

import os

# The C module behind hashlib's BLAKE2: the prompt hook imports this, and hashlib's front loads
# OpenSSL (a few ms of every prompt).
from _blake2 import blake2b


def root_name(directory: str) -> str:
    real = os.path.normcase(os.path.realpath(directory))
    return blake2b(os.fsencode(real), digest_size=10).hexdigest()
