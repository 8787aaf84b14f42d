"""What `repoctx validate` checks of the scopes: context files valid and fresh, and (strict)
in agreement with the code."""

from __future__ import annotations

from repoctx.base import index
from repoctx.base.command import Check, CheckResult
from repoctx.base.words import plural
from repoctx.base.workspace import Workspace
from repoctx.formats import context_file as cf
from repoctx.scopes import state as scope_state
from repoctx.scopes.write import validate_contexts


def _check_context_files(ws: Workspace) -> CheckResult:
    """Every `.context.yaml` in the tree follows schema v1; stale ones are a warning. Judged
    as status and check judge them (scope_state), on a serving process's live table."""
    try:
        rows = index.scan(ws, ws.scan_config()).rows
    except OSError:
        return CheckResult("fail", "The tree could not be scanned")
    with_file = [row for row in rows if row.has_context]
    if not with_file:
        return CheckResult("skip", "No .context.yaml files")
    invalid, stale = [], []
    for scope, j in scope_state.judge_rows(ws.root, with_file).items():
        path = cf.CONTEXT_FILE if scope == "." else f"{scope}/{cf.CONTEXT_FILE}"
        if j.problem is not None:
            bad = j.problem
            invalid.append(f"{path}: unsupported schema version {bad.version}" if bad.version is not None
                           else bad.at(path))
        elif j.state == "stale":
            stale.append(f"{path}: stale (stored fingerprint {j.head.fingerprint}, now {j.fingerprint})")
    if invalid:
        return CheckResult("fail", f"{len(invalid)} of {plural(len(with_file), 'context file')} "
                           f"{'is' if len(invalid) == 1 else 'are'} invalid", invalid + stale)
    if stale:
        return CheckResult("warn", f"{plural(len(with_file), 'context file')} valid, {len(stale)} stale", stale)
    return CheckResult("pass", f"{plural(len(with_file), 'context file')} valid and fresh")


def _check_consistency(ws: Workspace) -> CheckResult:
    """Context files against the code, as `repoctx scopes validate --strict` finds (schema
    errors are scopes.context_files' to report)."""
    r = validate_contexts(ws, strict=True)
    if r.error:
        return CheckResult("fail", "The tree could not be scanned")
    if not r.valid:
        return CheckResult("skip", "No valid .context.yaml files to compare with the code")
    found = [rep for rep in r.problems if rep.findings]
    if found:
        problems = [f"{rep.scope}: {f.kind.replace('_', ' ')}: {f.name}" for rep in found for f in rep.findings]
        return CheckResult("fail", f"{plural(r.findings, 'finding')} in {len(found)} of "
                           f"{plural(r.valid, 'context file')}", problems)
    return CheckResult("pass", f"{plural(r.valid, 'context file')} "
                       f"{'agrees' if r.valid == 1 else 'agree'} with the code")


# Run only by `validate --strict`: a finding here is a drift, not an invalid file.
CONSISTENCY = Check("scopes.consistency", "scopes", "Context files list the files and exports the code has "
                    "(validate --strict).", _check_consistency)


CHECKS = [
    Check("scopes.context_files", "scopes", "Every .context.yaml follows schema v1; stale ones warn.",
          _check_context_files),
    Check("scopes.consistency", "scopes", "Context files list the files and exports the code has "
          "(validate --strict).", _check_consistency, strict=True),
]
