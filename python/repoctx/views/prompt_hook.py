"""`repoctx prompt-hook`: Claude Code's UserPromptSubmit hook (`repoctx install claude-code --hook`).

Claude Code runs it on every prompt with the event as JSON on stdin (`prompt`, `cwd`,
`session_id`, `transcript_path`, `hook_event_name`) and adds what it prints, as
`hookSpecificOutput.additionalContext`, to what the agent reads. It answers with the files
`repoctx context` ranks for the prompt and a bundle of their text within a small budget
of its own. It is silent (prints nothing, exits 0) when the prompt is not a task: a slash
command, a shell (`!`) or memory (`#`) line, fewer than MIN_WORDS words that are not chat
(CHAT_WORDS), a working directory in no repository, or no file of the repository matching
it (the ranking then offers only the files changed lately, not worth the agent's reading).
A hook that fails must never stop the prompt, so every failure is silent on stdout too (one
line on stderr).

When a `repoctx serve` of the same repository runs, the hook asks it (views/relay.py): it holds
the index warm and answers with the same text (`ranked`); any failure there is answered here.
"""

from __future__ import annotations

import json
import os
import re
import sys

from repoctx.base.failures import failures

DEFAULT_BUDGET = 2000
DEFAULT_LIMIT = 8
MAX_EVENT_BYTES = 4 << 20
MIN_WORDS = 2
WORD = re.compile(r"\w{3,}")
# Words of a conversational reply, not of a task ("yes, go ahead", "thanks, continue").
CHAT_WORDS = frozenset("""
    yes yeah yep nope okay thanks thank you please continue ahead sure sounds good great nice cool
    done stop wait again now that this the and what why how with for are was can not but its
    let lets proceed retry try keep going right correct perfect fine looks hmm hello hey all just
    also then there here more next same one them they did does doing sorry alright agreed exactly
""".split())


def is_task(prompt: str) -> bool:
    """Whether a prompt asks for work on the code (the rule in the module's docstring, but the
    last clause, which needs the ranking)."""
    text = prompt.strip()
    if not text or text[0] in "/!#":
        return False
    return sum(1 for w in WORD.findall(text) if w.lower() not in CHAT_WORDS) >= MIN_WORDS


def _options(argv: list[str]) -> dict[str, int]:
    """`--budget N --limit N`, read by hand: argparse alone costs a hook more than its answer on a
    small repository. Anything else goes to argparse for its usage message."""
    options = {"budget": DEFAULT_BUDGET, "limit": DEFAULT_LIMIT}
    pairs = dict(zip(argv[::2], argv[1::2])) if len(argv) % 2 == 0 else None
    if pairs is not None and all(k in ("--budget", "--limit") and v.isdigit() for k, v in pairs.items()):
        return options | {k[2:]: int(v) for k, v in pairs.items()}
    import argparse

    parser = argparse.ArgumentParser(
        prog="repoctx prompt-hook",
        description="Claude Code's UserPromptSubmit hook: reads the event (JSON) on stdin and prints the files "
        "that matter for the prompt, with a small bundle, as additionalContext; silent when the prompt is not a task.")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                        help=f"token budget of the bundle (default {DEFAULT_BUDGET})")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"files to list (default {DEFAULT_LIMIT})")
    return vars(parser.parse_args(argv))


def main(argv: list[str]) -> int:
    options = _options(argv)
    try:
        text = answer(sys.stdin.buffer.read(MAX_EVENT_BYTES + 1), options["budget"], options["limit"])
    except failures() as exc:  # the prompt goes on whatever happens here
        print(f"repoctx prompt-hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    if text:
        out = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}
        sys.stdout.buffer.write(json.dumps(out).encode() + b"\n")  # ASCII: escapes whatever stdout's encoding
    return 0


def answer(raw: bytes, budget: int, limit: int) -> str | None:
    """The context to add for one hook event, or None to stay silent."""
    if len(raw) > MAX_EVENT_BYTES:
        return None
    # The standard parser, not formats/bounded (msgspec's import alone would double a silent
    # answer's cost): the event is bounded in size here, and too deep a nesting raises, answered silently.
    event = json.loads(raw)
    prompt = event.get("prompt") if isinstance(event, dict) else None
    if not isinstance(prompt, str) or not is_task(prompt):
        return None
    cwd = event.get("cwd")
    from repoctx.base import rootfind

    choice = rootfind.find_root(cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd())
    if choice.marker is None:  # not in a repository (a home directory): nothing to rank, and no walk of it
        return None
    # The server of this repository, when one runs, holds the index warm (views/relay.py).
    from repoctx.views import relay

    relayed = relay.ask(choice.root, prompt, budget, limit)
    if relayed is not None:
        return relayed
    from repoctx.base.task_index import build_ahead
    from repoctx.base.workspace import Workspace

    ws = Workspace.open(choice.root, root_reason=choice.reason)
    # The walk and the load of the saved index are the core's, without the GIL: they run on
    # another core while the command (msgspec, the registry) is imported, and `context` takes them.
    build_ahead(ws)
    return ranked(ws, prompt, budget, limit)


def ranked(ws, prompt: str, budget: int, limit: int) -> str | None:
    """The hook's text for a task prompt in `ws`, or None to stay silent: made here or, through
    the relay, by the server (the same text either way)."""
    from repoctx.registry.catalog import cli_commands

    (context,) = cli_commands("context") or ()
    result = context.handler(ws, context.parse({"task": prompt, "budget": budget, "limit": limit}))
    if context.is_error(result) or not result.files:
        return None
    from repoctx import _core

    if all(f.why == _core.TASK_NOTHING_MATCHED for f in result.files):  # no file matched: only the latest changes
        return None
    return _render(result)


def _render(r) -> str:
    lines = ["repoctx: the files of this repository that matter most for this prompt, ranked "
             "(`repoctx context` / the task_context tool gives more, with a larger budget):"]
    for i, f in enumerate(r.files, 1):
        where = ", ".join(f"{g.start}-{g.end} {g.symbol}".rstrip() for g in f.regions[:3])
        lines.append(f"{i}. {f.path}: {f.why}" + (f" (lines {where})" if where else ""))
    if r.bundle:
        lines.append(f"\nExcerpts ({r.tokens} of {r.budget} tokens):")
        for b in r.bundle:
            lines.append(f"── {b.path}:{b.start}-{b.end} ──")
            lines.append(b.text.rstrip("\n"))
    return "\n".join(lines)
