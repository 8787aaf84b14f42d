"""The context-engine v0 formats: a cache's `manifest.json` and `index.json`,
and the results and errors of the caches tools.

Field order is the wire order. Documents (`documents/*.json`) and the
`SelectionResult` are written by the Rust core with serde_json; their Structs
here describe them for schemas and tests.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

HASH_PREFIX = "sha256:"
MAX_BUDGET = 2**63 - 1

ErrorCode = Literal["cache_missing", "cache_invalid", "invalid_query", "invalid_budget", "io_error", "internal_error"]

# The canonical messages of the error schema, one per code.
MESSAGES: dict[str, str] = {
    "cache_missing": "Cache does not exist",
    "cache_invalid": "Cache exists but is invalid",
    "invalid_query": "Query is invalid",
    "invalid_budget": "Budget is invalid",
    "io_error": "I/O error occurred",
    "internal_error": "Internal error",
}

# CLI exit status per code (the reference CLI's frozen codes; 0 is success).
EXIT_CODES: dict[str, int] = {
    "invalid_query": 2,
    "invalid_budget": 3,
    "cache_missing": 4,
    "cache_invalid": 5,
    "io_error": 6,
    "internal_error": 7,
}


class BuildConfig(Struct, forbid_unknown_fields=False):
    version: str
    hash_algorithm: str


V0_CONFIG = BuildConfig(version="1", hash_algorithm="sha256")


class ManifestEntry(Struct):
    id: str
    version: str
    file: str


class Manifest(Struct):
    cache_version: str
    build_config: BuildConfig
    created_at: str  # informational; never part of the cache version
    document_count: Annotated[int, Meta(ge=0)]
    documents: list[ManifestEntry]


def cache_version(config: BuildConfig, entries: list[ManifestEntry]) -> str:
    """sha256 of the config's compact JSON, then `id:version` of each entry in id order, unseparated."""
    h = hashlib.sha256(msgspec.json.encode(config))
    for e in sorted(entries, key=lambda e: e.id):
        h.update(f"{e.id}:{e.version}".encode())
    return HASH_PREFIX + h.hexdigest()


def pretty(obj: object) -> bytes:
    """Two-space indented JSON, as serde_json's pretty printer writes it (no trailing newline)."""
    return msgspec.json.format(msgspec.json.encode(obj), indent=2)


# --- results -----------------------------------------------------------------


class ErrorBody(Struct):
    code: ErrorCode
    message: str


class ErrorResult(Struct):
    error: ErrorBody


def error(code: str, message: str | None = None) -> ErrorResult:
    return ErrorResult(ErrorBody(code, message or MESSAGES[code]))


class Why(Struct):
    query_terms: list[str]
    term_matches: int
    total_words: int


class SelectedDocument(Struct):
    id: str
    version: str
    content: str
    score: Annotated[float, Meta(ge=0.0, le=1.0)]
    tokens: int
    why: Why


class SelectionMeta(Struct):
    query: str
    budget: int
    tokens_used: int
    documents_considered: int
    documents_selected: int
    documents_excluded_by_budget: int


class SelectionResult(Struct):
    documents: list[SelectedDocument]
    selection: SelectionMeta


class CacheEntry(Struct):
    path: str
    has_manifest: bool


class ListCachesResult(Struct):
    caches: list[CacheEntry]


class InspectResult(Struct):
    cache_version: str
    document_count: int
    total_bytes: int
    valid: bool


class SkippedFile(Struct):
    path: str  # relative to the sources
    reason: str  # e.g. "binary (a NUL byte)", "over 1 MiB", "same content as another file"


class BuildResult(Struct):
    cache: str
    cache_version: str
    document_count: int
    source_bytes: int
    skipped: int  # files a repository build left out
    skipped_by_reason: dict[str, int] = {}  # how many for each reason
    skipped_files: list[SkippedFile] | UnsetType = UNSET  # each of them, with --verbose
