"""Bounded parsing figures (docs/security.md, "Bounded parsing"):

1. parse speed on ordinary files: the repository's own YAML (the golden project file, the
   Contextia fixture's configs, session records and artifact frontmatter, and the
   dotcontext reference's .context.yaml files when ../shared is beside the clone), read
   by PyYAML's C loader (what repoctx used before) and by repoctx's bounded reader;
2. each bomb in each YAML file repoctx reads, through the CLI: wall time and peak RSS;
3. the same bombs in all those files at once, asked through `repoctx serve`.

    python -m benches.bounded_parsing [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SHARED = HERE.parent / "shared" / "reference" / "dotcontext"


def ordinary_files() -> list[tuple[str, bytes]]:
    from repoctx.formats import artifact

    files = [HERE / "tests/golden/project/acme.project.yaml", *sorted((HERE / "tests/fixtures").rglob("*.yaml"))]
    found = [(str(p.relative_to(HERE)), p.read_bytes()) for p in files]
    for md in sorted((HERE / "tests/fixtures").rglob("*.md")):
        try:
            head, _ = artifact.split_document(md.read_text())
        except artifact.DocumentError:
            continue
        found.append((str(md.relative_to(HERE)) + " (frontmatter)", head.encode()))
    found += [(str(p.relative_to(SHARED.parent)), p.read_bytes()) for p in sorted(SHARED.rglob("*.yaml"))]
    return found


def per_parse_us(parse, datas: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for data in datas:
            try:
                parse(data)
            except Exception:  # the invalid conformance files: refused, timed all the same
                pass
        best = min(best, time.perf_counter() - start)
    return best / len(datas) * 1e6


def speed(repeat: int) -> None:
    import yaml

    from repoctx.formats import bounded

    files = ordinary_files()
    datas = [d for _, d in files]
    before = per_parse_us(lambda d: yaml.load(d, Loader=yaml.CSafeLoader), datas, repeat)
    after = per_parse_us(bounded.yaml, datas, repeat)
    size = sum(map(len, datas)) / len(datas)
    print(f"## Parse speed: {len(files)} files, {size:.0f} bytes on average (best of {repeat})\n")
    print("| reader | µs per file |\n|---|---|")
    print(f"| PyYAML C loader (before) | {before:.1f} |\n| bounded reader (rust/formats/yamlread.rs + msgspec) | {after:.1f} |\n")


N = 100_000
DEEP = "a: " + "[" * N + "]" * N + "\n"
LAUGHS = 'l0: &l0 "lol"\n' + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
TASK = "---\nid: TASK-001\ntitle: A task\nstatus: in_progress\nkind: chore\n---\n\nDo it.\n"
CASES = [  # (file, how the bomb sits in it, command)
    (".repoctx/project.yaml", "{}", ["project", "scan"]),
    (".repoctx/config.yaml", "{}", ["status"]),
    (".context.config.yaml", "{}", ["status"]),
    ("src/.context.yaml", "{}", ["validate"]),
    (".contextia/config.yaml", "{}", ["artifacts", "check"]),
    (".contextia/system/specs/SPEC-001.md", "---\n{}---\n", ["artifacts", "show", "SPEC-001"]),
    (".contextia/work/logs/TASK-001/2026-01-01T00-00-00Z/session.yaml", "{}", ["artifacts", "log", "read", "TASK-001"]),
    ("pnpm-workspace.yaml", "{}", ["project", "scan"]),
]


def run(root: Path, *args: str) -> tuple[int, float, int]:
    """(exit code, seconds, peak RSS in MiB) of one `repoctx` command in a process of its own."""
    probe = ("import json, resource, subprocess, sys, time\nt = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
             "print(json.dumps([p.returncode, time.perf_counter() - t,"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))\n")
    out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "repoctx", "--root", str(root), *args],
                         capture_output=True, text=True, check=True).stdout
    return tuple(json.loads(out))


def bombs() -> None:
    print(f"## Bombs through the CLI: YAML nested {N:,} deep ({len(DEEP) // 1000} KB) and the billion laughs "
          f"({len(LAUGHS)} bytes)\n")
    print("| file | command | bomb | exit | seconds | peak RSS MiB |\n|---|---|---|---|---|---|")
    for rel, shape, args in CASES:
        for name, bomb in (("deep", DEEP), ("laughs", LAUGHS)):
            root = Path(tempfile.mkdtemp(prefix="repoctx-bomb-"))
            try:
                (root / "src").mkdir()
                (root / "src/app.py").write_text("def main():\n    return 1\n" * 200)
                if rel.startswith(".contextia/"):
                    run(root, "artifacts", "init")
                    (root / ".contextia/work/tasks/TASK-001.md").write_text(TASK)
                if rel in (".repoctx/project.yaml", "pnpm-workspace.yaml"):
                    run(root, "project", "init")
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(shape.replace("{}", bomb))
                code, seconds, rss = run(root, *args)
                print(f"| `{rel}` | `repoctx {' '.join(args)}` | {name} | {code} | {seconds:.2f} | {rss:.0f} |")
            finally:
                shutil.rmtree(root)


SERVER_CALLS = [  # (method, params) a client sends to a server whose files all hold the bomb
    ("resources/read", {"uri": "context://project/overview"}),
    ("tools/call", {"name": "add_discovery", "arguments": {"module": "src", "type": "pattern", "content": "x"}}),
    ("tools/call", {"name": "query_context", "arguments": {"scope": "src"}}),
    ("tools/call", {"name": "list_contexts", "arguments": {}}),
    ("tools/call", {"name": "mcp_show", "arguments": {"artifact_id": "SPEC-001"}}),
    ("tools/call", {"name": "mcp_check", "arguments": {}}),
]


def server() -> None:
    print("\n## Bombs through `repoctx serve`: every file above holds the bomb at once\n")
    print("| bomb | calls answered | seconds for all | server peak RSS MiB |\n|---|---|---|---|")
    for name, bomb in (("deep", DEEP), ("laughs", LAUGHS)):
        root = Path(tempfile.mkdtemp(prefix="repoctx-bomb-"))
        try:
            (root / "src").mkdir()
            (root / "src/app.py").write_text("def main():\n    return 1\n" * 200)
            run(root, "project", "init")
            run(root, "artifacts", "init")
            (root / ".repoctx/config.yaml").write_text("profile: all\n")
            for rel, shape, _ in CASES[2:]:
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(shape.replace("{}", bomb))
            (root / ".repoctx/project.yaml").write_text(bomb)
            proc = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", str(root)], text=True,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                      "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}},
                     {"jsonrpc": "2.0", "method": "notifications/initialized"}]
            lines += [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(SERVER_CALLS, 1)]
            start = time.perf_counter()
            proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
            proc.stdin.flush()
            answered = {json.loads(proc.stdout.readline()).get("id") for _ in range(len(SERVER_CALLS) + 1)}
            seconds = time.perf_counter() - start
            status = Path(f"/proc/{proc.pid}/status").read_text()
            peak = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) / 1024
            proc.kill()
            proc.wait()
            print(f"| {name} | {len(answered - {0})} of {len(SERVER_CALLS)} | {seconds:.2f} | {peak:.0f} |")
        finally:
            shutil.rmtree(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    speed(args.repeat)
    bombs()
    server()


if __name__ == "__main__":
    main()
