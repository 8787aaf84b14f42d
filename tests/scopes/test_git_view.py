"""git's view in process (rust/git/view.rs, through gitstate.py) against the git CLI.

The oracle is what gitstate.py ran before the core answered: `git diff --name-only -z
--no-renames --relative COMMIT -- SCOPES` and `git ls-files --others --exclude-standard -z --
SCOPES`, each path's directory taken (`.context.yaml` aside). Random trees in real
repositories go through random edits and commits (content, same-size rewrites, touches, modes,
untracked and ignored files, deletions, new directories, `git add` without a commit, checkouts
of older commits, symlinks, ignore-file edits, `git gc`), and after each step every answer
(`head`, `changed_dirs`, `unchanged_since`, for several commits and scope sets) must be git's,
with the handle kept from step to step as a serving process keeps it. Linked worktrees, roots
below the top, packed objects, and hostile repositories (a `.git` that is a link to a device or
a FIFO, a crafted index, a huge file) have tests of their own; those that could hang or crash
run in a child process with a timeout.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import mkfifo
from repoctx.scopes import gitstate

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "LC_ALL": "C"}


def git(root, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    return subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "gc.auto=0", "-C", str(root), *args],
                          capture_output=True, env=env, check=check)


# --- the oracle: gitstate.py's subprocess answers, as they were ----------------------------

def _git_out(root, *args: str) -> bytes | None:
    proc = git(root, *args, check=False)
    return proc.stdout if proc.returncode == 0 else None


def _dirs_of(paths: bytes) -> set[str]:
    dirs = set()
    for raw in paths.split(b"\0"):
        if raw:
            path = raw.decode("utf-8", "surrogateescape")
            if posixpath.basename(path) != ".context.yaml":
                dirs.add(posixpath.dirname(path) or ".")
    return dirs


def oracle(root, commit: str, scopes: list[str]) -> set[str] | None:
    """The directories among or under `scopes` that git's two commands name."""
    spec = [] if "." in scopes else ["--", *(f":(literal){s}" for s in scopes)]
    diff = _git_out(root, "diff", "--name-only", "-z", "--no-renames", "--relative", commit, *spec)
    untracked = _git_out(root, "ls-files", "--others", "--exclude-standard", "-z", *spec)
    if diff is None or untracked is None:
        return None
    found = _dirs_of(diff) | _dirs_of(untracked)
    # A pathspec naming a file (a scope that is a file in the commit) lists its parent: the
    # directories asked about are the scopes and those below them.
    return {d for d in found if any(s == "." or d == s or d.startswith(s + "/") for s in scopes)}


def rev_parse_head(root) -> str | None:
    out = _git_out(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    return out.decode().strip() if out else None


def forget(root) -> None:
    """Drop the process's handle on `root`, as a new process would start without one."""
    gitstate._repos.pop(str(root), None)


def agree(root, commits: list[str], scope_sets: list[list[str]]) -> None:
    root = str(root)
    assert gitstate.head(root) == rev_parse_head(root)
    for commit in commits:
        for scopes in scope_sets:
            theirs = oracle(root, commit, scopes)
            ours = gitstate.changed_dirs(root, commit, scopes)
            assert ours == theirs, f"changed_dirs({commit[:8]}, {scopes}): ours {ours}, git's {theirs}"
            same = gitstate.unchanged_since(root, {s: commit for s in scopes})
            expected = set() if theirs is None else set(scopes) - theirs
            assert same == expected, f"unchanged_since({commit[:8]}, {scopes}): ours {same}, git's {expected}"


# --- random repositories and edits ------------------------------------------------------------

DIRS = ["a", "a/b", "c", "c/d/e", "build", "a/b/gen"]
NAMES = ["x.py", "y.py", "z.txt", "w.md", ".context.yaml", "n.log", "k.tmp", "v.bak"]
OPS = ["modify", "same_size", "touch", "chmod", "untracked", "ignored", "delete", "new_dir", "add",
       "commit", "checkout", "symlink", "gitignore", "gc", "forget", "context", "dir_for_file", "nested_repo",
       "rm_cached", "add_ignored", "assume"]


def _own(d: str, dirs: list[str]) -> list[str]:
    # Not into .git, nor into a repository of its own (whose files git answers for by its HEAD).
    return sorted(x for x in dirs if x != ".git" and not os.path.exists(os.path.join(d, x, ".git")))


def _files(root: Path) -> list[str]:
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = _own(d, dirs)
        out += [os.path.relpath(os.path.join(d, f), root) for f in sorted(files)]
    return out


def _dirs(root: Path, nested: bool = False) -> list[str]:
    """The tree's directories; with `nested`, the tops of repositories inside it too (as scopes
    to ask about, never to edit: git answers for their files by their HEAD)."""
    out = ["."]
    for d, dirs, _ in os.walk(root):
        if nested:
            out += [os.path.relpath(os.path.join(d, x), root) for x in dirs if x != ".git" and x not in _own(d, dirs)]
        dirs[:] = _own(d, dirs)
        out += [os.path.relpath(os.path.join(d, x), root) for x in dirs]
    return sorted(out)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.write_bytes(data)


def _commit(root: Path, history: list[str], message: str) -> None:
    git(root, "add", "-A", check=False)
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    history.append(rev_parse_head(root))


def make_repo(root: Path, rng: random.Random, file_mode: bool) -> list[str]:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "core.fileMode", "true" if file_mode else "false")
    excludes = root.parent / f"{root.name}-excludes"
    excludes.write_text("*.bak\n")
    git(root, "config", "core.excludesFile", str(excludes))
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("*.tmp\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    _write(root / "a" / ".gitignore", b"*.out\n")  # a nested rule: *.out is ignored in a/ and below only
    for d in rng.sample(DIRS, rng.randint(1, len(DIRS))):
        for name in rng.sample(NAMES[:5], rng.randint(1, 4)):
            _write(root / d / name, f"{d}/{name} {rng.random()}\n".encode())
    _write(root / "top.py", b"top\n")
    history: list[str] = []
    _commit(root, history, "start")
    return history


def apply(root: Path, op: str, i: int, j: int, history: list[str]) -> None:  # noqa: C901 - one branch per operation of the model
    files = [f for f in _files(root) if not (root / f).is_symlink()]
    anything = _files(root)
    dirs = _dirs(root)
    pick = lambda xs, k: xs[k % len(xs)] if xs else None  # noqa: E731
    f = pick(files, i)
    d = pick(dirs, j)
    if op == "modify" and f:
        with open(root / f, "ab") as fh:
            fh.write(b"more %d\n" % j)
    elif op == "same_size" and f:
        data = (root / f).read_bytes()
        _write(root / f, bytes(reversed(data)) if len(set(data)) > 1 else data + b"!")
    elif op == "touch" and f:
        t = time.time() + (j % 7) - 3
        os.utime(root / f, (t, t))
    elif op == "chmod" and f:
        os.chmod(root / f, (root / f).stat().st_mode ^ 0o111)
    elif op == "untracked" and d:
        _write(root / d / f"new{i % 5}.py", b"new\n")
    elif op == "ignored" and d:
        # One for each source of ignore rules: .gitignore, info/exclude, core.excludesFile,
        # and a/.gitignore (which ignores u.out in a/ and below, not elsewhere).
        for name in ("u.log", "u.tmp", "u.bak", "u.out"):
            _write(root / d / name, b"ignored\n")
        if j % 2:
            _write(root / d / "build" / "out.js", b"ignored, in an ignored directory\n")
    elif op == "delete":
        victim = pick(anything, i)
        if victim:
            (root / victim).unlink()
    elif op == "new_dir" and d:
        sub = root / d / f"nd{i % 4}"
        sub.mkdir(parents=True, exist_ok=True)
        if j % 3:
            _write(sub / "f.py", b"fresh\n")
    elif op == "add":
        victim = pick(anything, i)
        if victim and j % 2:
            git(root, "add", "--", victim, check=False)
        else:
            git(root, "add", "-A", check=False)
    elif op == "commit":
        _commit(root, history, f"step {i}")
    elif op == "checkout" and history:
        # git refuses (exit 128, "not uptodate") to overwrite a skip-worktree file changed behind its back
        git(root, "checkout", "-q", "-f", "--detach", pick(history, i), check=False)
    elif op == "symlink" and d:
        link = root / d / f"ln{i % 3}"
        if not link.exists() and not link.is_symlink():
            os.symlink((pick(files, j) and os.path.relpath(root / pick(files, j), link.parent)) or "nowhere", link)
    elif op == "gitignore" and d:
        _write(root / d / ".gitignore", rng_name(i, [b"*.py\n", b"!x.py\n*.py\n", b"gen/\n", b"z.*\n", b""]))
    elif op == "gc":
        git(root, "gc", "-q", "--prune=now")
    elif op == "forget":
        forget(root)
    elif op == "context" and d:
        _write(root / d / ".context.yaml", b"version: 1\nsummary: %d\n" % j)
    elif op == "nested_repo" and d:  # an untracked directory with a repository of its own
        sub = root / d / f"nr{i % 2}"
        if not (sub / ".git").exists():
            # Files the outer repository would ignore, or that lie deeper: git lists the
            # directory itself (`nr0/`), never what is inside.
            _write(sub / "inner.log", b"inside another repository\n")
            _write(sub / "deep" / "inner.py", b"deeper inside it\n")
            git(sub, "init", "-q")
            git(sub, "add", "-A")
            git(sub, "commit", "-qm", "inner")  # `git add -A` outside then records it as a gitlink
    elif op == "rm_cached" and f:  # out of the index, still in the worktree
        git(root, "rm", "-q", "--cached", "--", f, check=False)
    elif op == "add_ignored" and d:  # tracked although ignored
        _write(root / d / "forced.log", b"added by force\n")
        # git refuses (exit 1) to add a path an earlier step marked skip-worktree
        git(root, "add", "-f", "--", os.path.relpath(root / d / "forced.log", root), check=False)
    elif op == "assume" and f:  # git takes the index's word for the file, then it changes
        flag = "--assume-unchanged" if j % 2 else "--skip-worktree"
        if git(root, "update-index", flag, "--", f, check=False).returncode == 0:
            with open(root / f, "ab") as fh:
                fh.write(b"changed behind git's back\n")
    elif op == "dir_for_file" and f:
        (root / f).unlink()
        _write(root / f / "inner.py", b"a directory where a file was\n")


def rng_name(i: int, names: list):
    return names[i % len(names)]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), file_mode=st.booleans(),
       ops=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 999), st.integers(0, 999)), min_size=1, max_size=12))
def test_answers_are_gits_through_random_edits_and_commits(tmp_path_factory, seed, file_mode, ops):
    rng = random.Random(seed)
    root = tmp_path_factory.mktemp("repo") / "r"
    history = make_repo(root, rng, file_mode)
    agree(root, history, [["."]])
    for op, i, j in ops:
        apply(root, op, i, j, history)
        dirs = _dirs(root, nested=True)
        scopes = sorted(set(rng.sample(dirs, min(len(dirs), 3)) + ["a/gone"]))
        commits = sorted({history[0], history[-1], rng.choice(history)})
        agree(root, commits, [["."], scopes])
    forget(root)


# --- deterministic cases ------------------------------------------------------------------------

def _repo_with_history(root: Path) -> list[str]:
    rng = random.Random(7)
    history = make_repo(root, rng, True)
    _write(root / "a" / "later.py", b"later\n")
    _commit(root, history, "later")
    return history


def test_packed_objects_are_read(tmp_path):
    root = tmp_path / "r"
    history = _repo_with_history(root)
    git(root, "gc", "-q", "--prune=now")
    assert not any((root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*")), "every object is packed"
    forget(root)
    _write(root / "c" / "x.py", b"changed\n")
    agree(root, history, [["."], ["a", "c"]])
    assert gitstate.repo(str(root)).stats.trees_read > 0
    forget(root)


def test_a_linked_worktree_and_a_root_below_the_top(tmp_path):
    root = tmp_path / "r"
    history = _repo_with_history(root)
    wt = tmp_path / "wt"
    git(root, "worktree", "add", "-q", "--detach", str(wt), history[0])
    assert (wt / ".git").is_file()
    _write(wt / "top.py", b"edited in the worktree\n")
    _write(wt / "a" / "fresh.py", b"untracked in the worktree\n")
    _write(root / "c" / "only-main.py", b"untracked in the main checkout\n")
    for at in (wt, root, wt / "a", root / "a"):
        if at.is_dir():
            agree(at, history, [["."]])
    assert gitstate.head(str(wt)) == history[0] != gitstate.head(str(root))
    for at in (wt, root, wt / "a", root / "a"):
        forget(at)


def test_the_environment_names_no_other_index_or_worktree(tmp_path, monkeypatch):
    """gitstate.py took GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE out of git's environment (a
    hook or an agent may have them set): the core does not read them either."""
    root = tmp_path / "r"
    history = _repo_with_history(root)
    elsewhere = tmp_path / "elsewhere"
    _repo_with_history(elsewhere)
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "no-index"))
    forget(root)
    _write(root / "c" / "x.py", b"changed\n")
    assert gitstate.head(str(root)) == history[-1]
    monkeypatch.undo()
    assert gitstate.changed_dirs(str(root), history[0], ["."]) == oracle(root, history[0], ["."])
    forget(root)


def test_outside_a_repository_or_before_the_first_commit_git_cannot_tell(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert gitstate.head(str(plain)) is None
    assert gitstate.changed_dirs(str(plain), "0" * 40, ["."]) is None
    assert gitstate.unchanged_since(str(plain), {".": "0" * 40}) == set()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    assert gitstate.head(str(fresh)) is None
    # Once there is a commit, the same handle sees it.
    _write(fresh / "a.py", b"a\n")
    git(fresh, "add", "-A")
    git(fresh, "commit", "-qm", "first")
    assert gitstate.head(str(fresh)) == rev_parse_head(fresh)
    # An unknown commit, or anything but a full object id (git took names and options too).
    for commit in ("1" * 40, "HEAD", "--output=/tmp/x", rev_parse_head(fresh)[:12], ""):
        assert gitstate.changed_dirs(str(fresh), commit, ["."]) is None
    forget(plain)
    forget(fresh)


def test_a_second_question_costs_stats_and_a_touch_hashes_only_the_touched_file(tmp_path):
    root = tmp_path / "r"
    history = _repo_with_history(root)
    head = history[-1]
    repo = gitstate.repo(str(root))
    time.sleep(2.2)  # past the racy window: what is read now may be kept
    scopes = [d for d in _dirs(root) if d != "."]
    assert gitstate.unchanged_since(str(root), {s: head for s in scopes}) == set(scopes)
    first = repo.stats
    assert gitstate.unchanged_since(str(root), {s: head for s in scopes}) == set(scopes)
    again = repo.stats
    assert (again.index_reads, again.trees_read, again.files_hashed, again.ignore_files_read) == \
        (first.index_reads, first.trees_read, first.files_hashed, first.ignore_files_read)
    # A touch (mtime only): that one file is hashed, the answer stays "unchanged".
    touched = root / "a" / "later.py"
    os.utime(touched, (time.time() - 100, time.time() - 100))
    assert gitstate.unchanged_since(str(root), {s: head for s in scopes}) == set(scopes)
    assert repo.stats.files_hashed == again.files_hashed + 1
    # A same-size rewrite with the old mtime put back: its ctime still tells.
    st = touched.stat()
    touched.write_bytes(b"LATER\n")
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert gitstate.unchanged_since(str(root), {s: head for s in scopes}) == set(scopes) - {"a"}
    # A new file where every file was tracked (the listing was not read again while the
    # directory's stat held): seen at once.
    other = next(s for s in scopes if s.split("/")[0] != "a")
    _write(root / other / "new.py", b"untracked\n")
    assert gitstate.unchanged_since(str(root), {s: head for s in scopes}) == set(scopes) - {"a", other}
    agree(root, [head], [["."]])
    forget(root)


def test_a_huge_file_reads_changed_without_being_read(tmp_path):
    root = tmp_path / "r"
    history = _repo_with_history(root)
    big = root / "c" / "big.bin"
    _write(big, b"")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "empty big file")
    head = rev_parse_head(root)
    with open(big, "r+b") as fh:
        fh.truncate(65 << 20)  # sparse: over the core's 64 MiB hashing bound
    assert gitstate.changed_dirs(str(root), head, ["."]) == {"c"}
    assert oracle(root, head, ["."]) == {"c"}
    forget(root)
    del history


def _in_child(root: Path, timeout: float = 60) -> str:
    """gitstate's answers for `root` from a child process: a hang or a crash fails the test."""
    code = textwrap.dedent(f"""
        from repoctx.scopes import gitstate
        root = {str(root)!r}
        print(gitstate.head(root), gitstate.changed_dirs(root, "0" * 40, ["."]),
              sorted(gitstate.unchanged_since(root, {{".": "0" * 40}})))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_dot_git_that_is_a_link_to_a_device_or_a_fifo_answers_none(tmp_path):
    for i, target in enumerate(["/dev/zero", "fifo", "loop", "/nonexistent"]):
        root = tmp_path / f"r{i}"
        root.mkdir()
        if target == "fifo":
            mkfifo(tmp_path / "fifo")
            target = str(tmp_path / "fifo")
        if target == "loop":
            os.symlink(root / ".git", root / ".git")
        else:
            os.symlink(target, root / ".git")
        _write(root / "a.py", b"a\n")
        assert _in_child(root) == "None None []"


def test_a_git_directory_whose_files_are_fifos_or_links_to_devices_answers_none(tmp_path):
    for name in ["HEAD", "config", "index", "refs/heads/main", "packed-refs"]:
        root = tmp_path / name.replace("/", "-")
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        _write(root / "a.py", b"a\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "one")
        target = root / ".git" / name
        if target.exists():
            target.unlink()
        if name in ("HEAD", "refs/heads/main"):
            mkfifo(target)
        else:
            os.symlink("/dev/zero", target)
        assert _in_child(root) == "None None []", name


@pytest.mark.parametrize("damage", ["garbage", "truncated", "many_entries", "bad_checksum", "dotdot_path"])
def test_a_crafted_index_answers_none(tmp_path, damage):
    root = tmp_path / "r"
    _repo_with_history(root)
    head = rev_parse_head(root)
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes())
    if damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "many_entries":
        data[8:12] = (2**31).to_bytes(4, "big")  # an entry count no file of this size can hold
    elif damage == "bad_checksum":
        data[-1] ^= 0xFF
    elif damage == "dotdot_path":  # an entry for a/xx/yy renamed a/../yy, the checksum made to hold
        blob = git(root, "hash-object", "-w", "top.py").stdout.decode().strip()
        git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},a/xx/yy")
        data = bytearray(index.read_bytes())
        at = data.index(b"a/xx/yy")
        data[at:at + 7] = b"a/../yy"
    if damage in ("many_entries", "dotdot_path"):
        data[-20:] = hashlib.sha1(data[:-20]).digest()  # a checksum that holds: the content is what is judged
    index.write_bytes(bytes(data))
    code = textwrap.dedent(f"""
        from repoctx.scopes import gitstate
        print(gitstate.changed_dirs({str(root)!r}, {head!r}, ["."]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    # git reads what it can of such an index (it checks the checksum only in fsck) and may
    # answer from half an index; the core refuses it: "git cannot tell", so stale.
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "None"
