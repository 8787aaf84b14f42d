"""Proposals: changes to context that an agent asks for and a person applies.

`propose_change` (`repoctx propose`) stores a proposal under
`.repoctx/proposals/` after checking that it applies cleanly to the files as
they are now and gives schema-valid files; it changes nothing else. What an
agent proposes is untrusted: `repoctx proposals apply ID` — on the CLI only,
never over MCP — re-checks the preconditions (the hashes and fingerprints the
change was based on) and applies every operation or none.

Only context files can be proposed: `.context.yaml` anywhere,
`.context.config.yaml`, `.repoctx/project.yaml`, and the markdown and YAML
files under `.contextia/`. Source code, repoctx's own configuration and client
configurations are out of reach, so applying a proposal can never widen what
an agent is allowed to do.
"""

from __future__ import annotations

import errno
import hashlib
import os
import time
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx import _core
from repoctx.base import clock, fs, journal, local_state
from repoctx.base.command import Check, CheckResult, CliView, Command, fixed_form
from repoctx.base.errors import RepoctxError
from repoctx.base.results import (
    DEFAULT_MAX_BYTES,
    Envelope,
    MaxBytes,
    cut_utf8,
    failure,
    is_failure,
    success,
    with_structured_invalid,
)
from repoctx.base.words import plural
from repoctx.base.workspace import PathEscape, Workspace, atomic_write, locked
from repoctx.formats import bounded
from repoctx.formats.proposal import (
    PROPOSALS_DIR,
    FileHash,
    Operation,
    Precondition,
    Proposal,
    Replace,
    Write,
    content_problem,
    kind_of,
    proposal_id,
)

MAX_PROPOSAL_BYTES = 1 << 20
MAX_FILE_BYTES = 4 << 20


class ProposalError(RepoctxError):
    def __init__(self, code: str, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message, code=code)
        self.problems = problems or []


# --- reading the files a proposal is about ----------------------------------


def _inside(ws: Workspace, path: str) -> tuple[str, str]:
    try:
        return ws.resolve(path)
    except PathEscape:
        raise ProposalError("invalid_path", f'"{path}" leads outside the repository') from None


def _resolve(ws: Workspace, path: str) -> tuple[str, str]:
    """A path operations may change: a context file inside the root."""
    rel, full = _inside(ws, path)
    if rel == "." or kind_of(rel) is None:
        raise ProposalError(
            "invalid_path",
            f'"{path}" is not a context file; proposals may change .context.yaml files, '
            ".context.config.yaml, .repoctx/project.yaml and .contextia/ markdown or YAML",
        )
    if os.path.isdir(full):
        raise ProposalError("invalid_path", f'"{rel}" is a directory')
    return rel, full


def _read(full: str, rel: str) -> bytes | None:
    """The file at `full`, None when absent; errors name it by `rel`, its path in the
    repository (an agent sees them: never the absolute path)."""
    try:
        return fs.read_bytes(*fs.split(full), MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a directory, a name over 255 bytes, a link loop or out: no file to read
        if exc.errno == errno.EFBIG:
            raise ProposalError("invalid_path", f"{rel} is larger than {MAX_FILE_BYTES} bytes") from None
        raise ProposalError("invalid_path", f"{rel} cannot be read as a file ({exc.strerror})") from None


def _sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _failed_preconditions(ws: Workspace, preconditions: list[Precondition]) -> list[str]:
    problems = []
    for pre in preconditions:
        if isinstance(pre, FileHash):
            rel, full = _inside(ws, pre.path)
            now = _sha256(_read(full, rel))
            if now != pre.sha256:
                was = "absent" if pre.sha256 is None else f"sha256 {pre.sha256[:12]}…"
                is_ = "absent" if now is None else f"sha256 {now[:12]}…"
                problems.append(f"{rel} changed since the proposal was made (was {was}, now {is_})")
        else:
            try:
                rel, full = ws.resolve(pre.scope)
                now = _core.fingerprint(full)
            except PathEscape:
                raise ProposalError("invalid_path", f'scope "{pre.scope}" leads outside the repository') from None
            except OSError:
                now = None
            if now != pre.fingerprint:
                problems.append(f'scope "{rel}" changed since the proposal was made '
                                f"(fingerprint was {pre.fingerprint}, now {now or 'unreadable'})")
    return problems


def _plan(ws: Workspace, operations: list[Operation]) -> dict[str, tuple[str, bytes | None]]:
    """rel -> (absolute path, new content or None to delete), every operation applied in memory."""
    state: dict[str, tuple[str, bytes | None]] = {}
    problems = []
    for i, op in enumerate(operations):
        rel, full = _resolve(ws, op.path)
        current = state[rel][1] if rel in state else _read(full, rel)
        where = f"operation {i + 1} ({type(op).__struct_config__.tag} {rel})"
        if isinstance(op, Write):
            state[rel] = (full, op.content.encode("utf-8"))
        elif isinstance(op, Replace):
            if current is None:
                problems.append(f"{where}: the file does not exist")
                continue
            count = current.count(op.old.encode("utf-8"))
            if count != 1:
                problems.append(f"{where}: the text to replace occurs {count} times, not once")
                continue
            state[rel] = (full, current.replace(op.old.encode("utf-8"), op.new.encode("utf-8")))
        else:
            if current is None:
                problems.append(f"{where}: the file does not exist")
                continue
            state[rel] = (full, None)
    for rel, (_full, data) in state.items():
        if data is not None:
            problem = content_problem(rel, data)
            if problem:
                problems.append(f"{rel}: {problem}")
    if problems:
        raise ProposalError("invalid_proposal", "The proposal does not apply cleanly: " + problems[0], problems)
    return state


def _check(ws: Workspace, proposal: Proposal) -> dict[str, tuple[str, bytes | None]]:
    """Everything `validate` and `apply` verify; the planned changes when all hold."""
    expected = proposal_id(proposal.title, proposal.rationale, proposal.operations, proposal.preconditions)
    if expected != proposal.id:
        raise ProposalError("invalid_proposal",
                            f"Proposal {proposal.id} was edited after it was made (its content no longer matches its id)")
    recorded = _recorded(proposals_dir(ws)).get(proposal.id)
    if recorded is not None and recorded != proposal.created_at:  # one made before the record: flagged only
        edited = edits(proposals_dir(ws), proposal)
        raise ProposalError("invalid_proposal", edited[0], edited)
    if proposal.status == "applied":
        raise ProposalError("already_applied", f"Proposal {proposal.id} was applied at {proposal.applied_at}")
    failed = _failed_preconditions(ws, proposal.preconditions)
    if failed:
        raise ProposalError("precondition_failed", failed[0], failed)
    return _plan(ws, proposal.operations)


# --- the store ----------------------------------------------------------------


def proposals_dir(ws: Workspace) -> str:
    try:
        return ws.resolve(PROPOSALS_DIR)[1]
    except PathEscape:
        raise ProposalError("invalid_path", f"{PROPOSALS_DIR} leads outside the repository") from None


# What repoctx recorded as it stored each proposal, one `<id> <created_at>` line each, in the
# order they were made: "latest" and the listing follow it, never a proposal file's own
# created_at (a hand edit could make any proposal the newest), and an edit of one is flagged.
RECORD_FILE = "made.txt"


def _recorded(directory: str) -> dict[str, str]:
    """id -> created_at as recorded, in the order the proposals were made."""
    raw = _read(os.path.join(directory, RECORD_FILE), f"{PROPOSALS_DIR}/{RECORD_FILE}") or b""
    out: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        pid, _, created = line.partition(" ")
        if _is_id(pid) and pid not in out:
            out[pid] = created
    return out


def _record(directory: str, proposal: Proposal) -> None:
    """Add a proposal to the record (under the write lock, as its file was written)."""
    lines = "".join(f"{pid} {at}\n" for pid, at in {**_recorded(directory), proposal.id: proposal.created_at}.items())
    atomic_write(os.path.join(directory, RECORD_FILE), lines.encode())


def edits(directory: str, proposal: Proposal) -> list[str]:
    """What was changed by hand in a stored proposal that its id does not cover."""
    recorded = _recorded(directory).get(proposal.id)
    if recorded is None:
        return [f"Proposal {proposal.id} is not in repoctx's record of the proposals made here "
                f"({PROPOSALS_DIR}/{RECORD_FILE}): it was copied or written by hand"]
    if recorded != proposal.created_at:
        return [f"Proposal {proposal.id} was edited: created_at says {proposal.created_at}, "
                f"repoctx recorded {recorded}"]
    return []


def _stored(ws: Workspace) -> list[tuple[str, Proposal | None]]:
    """(id, proposal or None when unreadable), newest first: in the order repoctx recorded, then
    those it has no record of (by their own created_at), oldest of all."""
    directory = proposals_dir(ws)
    try:
        names = fs.listdir(*fs.split(directory))
    except FileNotFoundError:
        return []
    found: list[tuple[str, Proposal | None]] = []
    for name in names:
        pid = name[:-5]
        if not (name.endswith(".json") and _is_id(pid)):
            continue
        try:
            found.append((pid, _decode(_read(os.path.join(directory, name), f"{PROPOSALS_DIR}/{name}") or b"")))
        except (ProposalError, msgspec.DecodeError):
            found.append((pid, None))
    order = {pid: i for i, pid in enumerate(_recorded(directory))}
    found.sort(key=lambda item: (order.get(item[0], -1), item[1].created_at if item[1] else "", item[0]), reverse=True)
    return found


def _is_id(text: str) -> bool:
    return len(text) == 12 and all(c in "0123456789abcdef" for c in text)


def _decode(raw: bytes) -> Proposal:
    if len(raw) > MAX_PROPOSAL_BYTES:
        raise msgspec.DecodeError("too large")
    return bounded.json(raw, type=Proposal)


def load(ws: Workspace, ref: str) -> tuple[Proposal, bytes]:
    """A stored proposal and its bytes; `latest` names the newest."""
    directory = proposals_dir(ws)
    if ref == "latest":
        readable = [pid for pid, p in _stored(ws) if p is not None]
        if not readable:
            raise ProposalError("not_found", "No proposals yet; agents make them with propose_change")
        ref = readable[0]
    elif not _is_id(ref):
        raise ProposalError("invalid_argument", f'"{ref}" is not a proposal id (12 hex digits) or latest')
    raw = _read(os.path.join(directory, ref + ".json"), f"{PROPOSALS_DIR}/{ref}.json")
    if raw is None:
        raise ProposalError("not_found", f"No proposal {ref}; `repoctx proposals list` shows them")
    try:
        return _decode(raw), raw
    except msgspec.DecodeError as exc:
        raise ProposalError("invalid_proposal", f"Proposal {ref} is not a valid proposal file ({exc})") from None


def _encode(proposal: Proposal) -> bytes:
    return msgspec.json.format(msgspec.json.encode(proposal)) + b"\n"


# --- propose_change -------------------------------------------------------------


class ProposeParams(Struct):
    title: Annotated[str, Meta(min_length=1, max_length=200, description="One line: what the change does")]
    rationale: Annotated[str, Meta(min_length=1, description="Why: what you learned that the context lacks or gets wrong")]
    operations: Annotated[
        list[Operation],
        Meta(min_length=1, description='Applied in order, each an object: {"op": "write", "path": '
             '"src/.context.yaml", "content": "..."} (the whole content), {"op": "replace", "path": "...", '
             '"old": "...", "new": "..."} (one exact occurrence) or {"op": "delete", "path": "..."}; paths of '
             "context files, relative to the root"),
    ]
    preconditions: Annotated[
        list[Precondition],
        Meta(description='What the change was based on, each an object: {"kind": "file", "path": "...", '
             '"sha256": "<64 hex>"} (null: the file was absent) or {"kind": "scope", "scope": "src", '
             '"fingerprint": "..."}. Files the operations touch are recorded as they are now when not given.'),
    ] = []


class ProposalSummary(Struct):
    id: str
    status: str  # pending, applied, or unreadable for a file that is not a valid proposal
    title: str
    files: list[str]
    created_at: str


class ProposeResult(Envelope, kw_only=True):
    proposal: ProposalSummary | UnsetType = UNSET
    problems: list[str] | UnsetType = UNSET


def _summary(p: Proposal) -> ProposalSummary:
    return ProposalSummary(p.id, p.status, p.title, p.files, p.created_at)


def propose(ws: Workspace, p: ProposeParams) -> ProposeResult:
    name = "propose"
    if ws.read_only:
        return failure(ProposeResult, name, "read_only", "The server is read-only; proposals cannot be stored")
    try:
        operations = [msgspec.structs.replace(op, path=_resolve(ws, op.path)[0]) for op in p.operations]
        given = []
        for pre in p.preconditions:
            if isinstance(pre, FileHash):
                given.append(msgspec.structs.replace(pre, path=_inside(ws, pre.path)[0]))
            else:
                given.append(msgspec.structs.replace(pre, scope=_inside(ws, pre.scope)[0]))
        failed = _failed_preconditions(ws, given)
        if failed:
            raise ProposalError("precondition_failed",
                                "The files changed since you read them: " + failed[0], failed)
        files = sorted({op.path for op in operations})
        covered = {pre.path for pre in given if isinstance(pre, FileHash)}
        auto = [FileHash(rel, _sha256(_read(_resolve(ws, rel)[1], rel))) for rel in files if rel not in covered]
        preconditions = given + auto
        _plan(ws, operations)
        pid = proposal_id(p.title, p.rationale, operations, preconditions)
        proposal = Proposal(id=pid, title=p.title, rationale=p.rationale, files=files, operations=operations,
                            preconditions=preconditions, created_at=clock.stamp_us(time.time()))
        data = _encode(proposal)
        if len(data) > MAX_PROPOSAL_BYTES:
            raise ProposalError("invalid_argument", f"The proposal is larger than {MAX_PROPOSAL_BYTES} bytes")
        directory = proposals_dir(ws)
        local_state.makedirs(*fs.split(directory))
        with locked(ws.root):
            path = os.path.join(directory, pid + ".json")
            existing = _read(path, f"{PROPOSALS_DIR}/{pid}.json")
            if existing is not None:  # the same proposal again: keep the first
                proposal = _decode(existing)
            else:
                atomic_write(path, data)
                _record(directory, proposal)
    except ProposalError as exc:
        return failure(ProposeResult, name, exc.code, str(exc), **({"problems": exc.problems} if exc.problems else {}))
    return success(ProposeResult, name, proposal=_summary(proposal))


def _render_propose(r: ProposeResult) -> str:
    if not r.ok:
        return "\n".join([r.error.message, *(f"  - {x}" for x in (r.problems or [])[1:])])
    p = r.proposal
    return (f"Proposal {p.id} ({p.status}): {p.title}\n  files: {', '.join(p.files)}\n"
            f"A person reviews it with `repoctx proposals inspect --id {p.id}` and applies it with "
            f"`repoctx proposals apply {p.id}`.")


# --- proposals list -------------------------------------------------------------


class ListParams(Struct):
    pass


class ListResult(Envelope, kw_only=True):
    proposals: list[ProposalSummary] | UnsetType = UNSET


def proposals_list(ws: Workspace, p: ListParams) -> ListResult:
    name = "proposals list"
    try:
        stored = _stored(ws)
    except ProposalError as exc:
        return failure(ListResult, name, exc.code, str(exc))
    return success(ListResult, name, proposals=[
        _summary(prop) if prop else ProposalSummary(pid, "unreadable", "", [], "") for pid, prop in stored
    ])


def _render_list(r: ListResult) -> str:
    if not r.ok:
        return r.error.message
    if not r.proposals:
        return "No proposals."
    return "\n".join(f"{p.id}  {p.status:<10} {p.created_at}  {p.title}" for p in r.proposals)


# --- proposals inspect ----------------------------------------------------------

Target = Annotated[Literal["latest"] | None, Meta(description="latest (the default), or give --id")]
ProposalRef = Annotated[str, Meta(description="A proposal id, or latest for the newest proposal")]


class InspectParams(Struct):
    target: Target = None
    id: ProposalRef | None = None
    max_bytes: MaxBytes = DEFAULT_MAX_BYTES


# The MCP forms are the contract's fixed commands: `proposals inspect latest --max-bytes 12000`
# and `proposals inspect --id latest --max-bytes 12000` (the bound is not the client's to raise).
class InspectLatestParams(Struct):
    pass


class InspectByIdParams(Struct):
    id: ProposalRef = "latest"


class InspectResult(Envelope, kw_only=True):
    proposal: ProposalSummary | UnsetType = UNSET
    content: str | UnsetType = UNSET  # the stored proposal, cut at max_bytes on a UTF-8 boundary
    truncated: bool | UnsetType = UNSET
    total_bytes: int | UnsetType = UNSET
    # What was edited by hand that its id does not cover (validate and apply refuse a forged
    # created_at), or that repoctx has no record of the proposal.
    edited: list[str] | UnsetType = UNSET


def _ref(target: str | None, pid: str | None) -> str:
    if target and pid:
        raise ProposalError("invalid_argument", "Give latest or --id, not both")
    return pid or "latest"


def inspect(ws: Workspace, p: InspectParams) -> InspectResult:
    name = "proposals inspect"
    try:
        proposal, raw = load(ws, _ref(p.target, p.id))
    except ProposalError as exc:
        return failure(InspectResult, name, exc.code, str(exc))
    content, truncated = cut_utf8(raw, p.max_bytes)
    edited = edits(proposals_dir(ws), proposal)
    return success(InspectResult, name, proposal=_summary(proposal), content=content,
                   truncated=truncated, total_bytes=len(raw), **({"edited": edited} if edited else {}))


def _render_inspect(r: InspectResult) -> str:
    if not r.ok:
        return r.error.message
    note = f"\n[cut at {len(r.content.encode())} of {r.total_bytes} bytes; raise --max-bytes to see more]" if r.truncated else ""
    flagged = "".join(f"\nwarning: {x}" for x in r.edited or ())
    return r.content.rstrip("\n") + note + flagged


# --- proposals validate ----------------------------------------------------------


class ValidateParams(Struct):
    target: Target = None
    id: ProposalRef | None = None


class ValidateLatestParams(Struct):
    pass


class ValidateByIdParams(Struct):
    id: ProposalRef = "latest"  # the contract's `proposals validate --id latest`


class ValidateResult(Envelope, kw_only=True):
    proposal: ProposalSummary | UnsetType = UNSET
    valid: bool | UnsetType = UNSET
    problems: list[str] | UnsetType = UNSET


def validate(ws: Workspace, p: ValidateParams) -> ValidateResult:
    name = "proposals validate"
    try:
        proposal, _raw = load(ws, _ref(p.target, p.id))
    except ProposalError as exc:
        return failure(ValidateResult, name, exc.code, str(exc))
    try:
        _check(ws, proposal)
    except ProposalError as exc:
        return failure(ValidateResult, name, exc.code, str(exc), proposal=_summary(proposal), valid=False,
                       problems=exc.problems or [str(exc)])
    return success(ValidateResult, name, proposal=_summary(proposal), valid=True, problems=[])


def _render_validate(r: ValidateResult) -> str:
    if r.proposal is UNSET:
        return r.error.message
    head = f"Proposal {r.proposal.id}: " + ("applies cleanly." if r.valid else "does not apply.")
    return "\n".join([head, *(f"  - {x}" for x in r.problems)])


# --- proposals apply (CLI only) ------------------------------------------------


class ApplyParams(Struct):
    id: Annotated[str, Meta(description="The proposal id (see `repoctx proposals list`)")]


class Change(Struct):
    path: str
    action: Literal["created", "modified", "deleted"]


class ApplyResult(Envelope, kw_only=True):
    proposal: ProposalSummary | UnsetType = UNSET
    changes: list[Change] | UnsetType = UNSET
    problems: list[str] | UnsetType = UNSET


def apply(ws: Workspace, p: ApplyParams) -> ApplyResult:
    name = "proposals apply"
    if ws.read_only:
        return failure(ApplyResult, name, "read_only", "Read-only: proposals cannot be applied")
    if not _is_id(p.id):
        return failure(ApplyResult, name, "invalid_argument", f'"{p.id}" is not a proposal id (12 hex digits)')
    try:
        with locked(ws.root):
            proposal, _raw = load(ws, p.id)
            plan = _check(ws, proposal)
            applied = msgspec.structs.replace(proposal, status="applied", applied_at=clock.stamp_us(time.time()))
            changes = [Change(rel, "deleted" if data is None else "modified" if os.path.lexists(full) else "created")
                       for rel, (full, data) in plan.items()]
            # Every file and the proposal's own record, as one step: a kill at any point leaves
            # all of them old or all new once the next command has run (journal.py).
            journal.commit(ws.root, [(rel, data) for rel, (_full, data) in plan.items()]
                           + [(f"{PROPOSALS_DIR}/{proposal.id}.json", _encode(applied))])
    except ProposalError as exc:
        return failure(ApplyResult, name, exc.code, str(exc), **({"problems": exc.problems} if exc.problems else {}))
    except OSError as exc:
        return failure(ApplyResult, name, "io_error", f"Applying failed ({exc.strerror})")
    return success(ApplyResult, name, proposal=_summary(applied), changes=changes)


def _render_apply(r: ApplyResult) -> str:
    if not r.ok:
        return "\n".join([r.error.message, *(f"  - {x}" for x in (r.problems or [])[1:])])
    lines = [f"Applied proposal {r.proposal.id}: {r.proposal.title}"]
    lines += [f"  {c.action:<8} {c.path}" for c in r.changes]
    return "\n".join(lines)


# --- the check validate --run runs ---------------------------------------------


def _check_pending(ws: Workspace) -> CheckResult:
    try:
        stored = _stored(ws)
    except ProposalError as exc:
        return CheckResult("fail", str(exc))
    pending = [prop for _pid, prop in stored if prop is not None and prop.status == "pending"]
    problems = [f"{pid}.json is not a valid proposal file" for pid, prop in stored if prop is None]
    stale = []
    for prop in pending:
        try:
            _check(ws, prop)
        except ProposalError as exc:
            stale.append(f"{prop.id} ({prop.title}): {exc}")
    if problems:
        return CheckResult("fail", f"{plural(len(problems), 'unreadable proposal file')}", problems + stale)
    if stale:
        return CheckResult("warn", f"{len(stale)} of {plural(len(pending), 'pending proposal')} no longer "
                           f"{'applies' if len(stale) == 1 else 'apply'}", stale)
    if not pending:
        return CheckResult("pass", "No pending proposals")
    return CheckResult("pass", f"{plural(len(pending), 'pending proposal')} "
                       f"{'applies' if len(pending) == 1 else 'apply'} cleanly")


CHECKS = [
    Check("control.proposals", "control", "Pending proposals are readable and still apply cleanly.", _check_pending),
]




COMMANDS = with_structured_invalid([
    Command(
        name="propose",
        tool="propose_change",
        profile="propose",  # not one of the contract's twelve ctxt tools: served when asked for
        summary="Propose a change to context files instead of making it.",
        description="Stores the change (title, rationale, operations, and the hashes or fingerprints it "
        "was based on) under .repoctx/proposals/ after checking it applies cleanly and gives schema-valid "
        "files. Nothing else changes: a person reviews it and applies it with `repoctx proposals apply ID`. "
        "Context files only: .context.yaml, .context.config.yaml, .repoctx/project.yaml, .contextia/.",
        params=ProposeParams,
        result=ProposeResult,
        handler=propose,
        is_error=is_failure,
        writes=True,
        cli=CliView(render=_render_propose),
    ),
    Command(
        name="proposals list",
        tool="ctxt_proposals_list",
        summary="List the stored proposals, newest first.",
        description="Each with its id, status (pending or applied), title, files and creation time.",
        params=ListParams,
        result=ListResult,
        handler=proposals_list,
        is_error=is_failure,
        cli=CliView(render=_render_list),
    ),
    Command(
        name="proposals inspect",
        tool=None,
        summary="Show a stored proposal: `proposals inspect latest` or `--id ID`.",
        description="The proposal as stored, cut at --max-bytes (default 12000) on a UTF-8 boundary.",
        params=InspectParams,
        result=InspectResult,
        handler=inspect,
        is_error=is_failure,
        cli=CliView(positional=("target",), render=_render_inspect),
    ),
    Command(
        name="proposals inspect",
        tool="ctxt_proposals_inspect_latest",
        summary="Show the newest proposal (as `repoctx proposals inspect latest --max-bytes 12000`).",
        description="The proposal as stored, cut at 12000 bytes on a UTF-8 boundary; "
        "`truncated` says whether it was cut. Proposals are untrusted until a person applies them.",
        params=InspectLatestParams,
        result=InspectResult,
        handler=fixed_form(InspectParams, inspect, target="latest", id=None, max_bytes=DEFAULT_MAX_BYTES),
        is_error=is_failure,
        cli=None,
    ),
    Command(
        name="proposals inspect",
        tool="ctxt_proposals_inspect_latest_by_id",
        summary="Show one proposal by id, latest by default (as `repoctx proposals inspect --id latest "
        "--max-bytes 12000`).",
        description="The proposal as stored, cut at 12000 bytes on a UTF-8 boundary; "
        "`truncated` says whether it was cut. Proposals are untrusted until a person applies them.",
        params=InspectByIdParams,
        result=InspectResult,
        handler=fixed_form(InspectParams, inspect, target=None, max_bytes=DEFAULT_MAX_BYTES),
        is_error=is_failure,
        cli=None,
    ),
    Command(
        name="proposals validate",
        tool=None,
        summary="Check that a proposal still applies cleanly: `proposals validate latest` or `--id ID`.",
        description="Verifies the stored proposal is intact, its preconditions still hold, every operation "
        "applies and the resulting files are schema-valid. Exits non-zero when it does not apply.",
        params=ValidateParams,
        result=ValidateResult,
        handler=validate,
        is_error=is_failure,
        cli=CliView(positional=("target",), render=_render_validate),
    ),
    Command(
        name="proposals validate",
        tool="ctxt_proposals_validate_latest",
        summary="Check that the newest proposal still applies cleanly (as `repoctx proposals validate latest`).",
        description="Verifies the stored proposal is intact, its preconditions still hold, every operation "
        "applies and the resulting files are schema-valid.",
        params=ValidateLatestParams,
        result=ValidateResult,
        handler=fixed_form(ValidateParams, validate, target="latest", id=None),
        is_error=is_failure,
        cli=None,
    ),
    Command(
        name="proposals validate",
        tool="ctxt_proposals_validate_latest_by_id",
        summary="Check that one proposal, by id, latest by default, still applies cleanly "
        "(as `repoctx proposals validate --id latest`).",
        description="Verifies the stored proposal is intact, its preconditions still hold, every operation "
        "applies and the resulting files are schema-valid.",
        params=ValidateByIdParams,
        result=ValidateResult,
        handler=fixed_form(ValidateParams, validate, target=None),
        is_error=is_failure,
        cli=None,
    ),
    Command(
        name="proposals apply",
        tool=None,  # a person applies proposals; never an MCP tool
        summary="Apply a proposal to the files, after re-checking its preconditions.",
        description="All operations or none: refused when any file changed since the proposal was made, "
        "when it was edited after it was made, or when a result would not be schema-valid.",
        params=ApplyParams,
        result=ApplyResult,
        handler=apply,
        is_error=is_failure,
        writes=True,
        cli=CliView(positional=("id",), render=_render_apply),
    ),
])
