"""The one manifest reader (repoctx.base.manifests): the go.mod parser (the core's,
rust/formats/gomod.rs) against a plain oracle and against go.mod files built from known
contents; what each manifest declares, what is read as absent; and `project init` and `init`
seeing the same project from the same files."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, write
from repoctx import _core
from repoctx.base import fs
from repoctx.base import manifests as mf

# --- go.mod: random lines against a plain oracle -------------------------------


def oracle(text: str) -> tuple[str, str | None, list[tuple[str, str, bool]]]:
    """go.mod read the plain way: cut the comment at `//`, pad the parentheses, split on white
    space, unquote "…"; `verb (` opens a block that `)` closes. For texts whose quoted strings
    hold no white space, parenthesis, quote, backslash or `//`."""
    module, go, requires, block = "", None, [], None
    for line in text.split("\n"):
        code, slashes, comment = line.partition("//")
        words = code.replace("(", " ( ").replace(")", " ) ").split()
        words = [w[1:-1] if len(w) >= 2 and w[0] == w[-1] == '"' else w for w in words]
        if block is not None:
            if words[:1] == [")"]:
                block = None
                continue
            verb, args = block, words
        elif len(words) > 1 and words[1] == "(":
            block = None if words[2:3] == [")"] else words[0]
            continue
        else:
            verb, args = (words[0], words[1:]) if words else ("", [])
        if not args:
            continue
        if verb == "module":
            module = args[0]
        elif verb == "go":
            go = args[0]
        elif verb == "require" and len(args) >= 2:
            said = comment.split() if slashes else []
            indirect = said == ["indirect"] or (len(said) > 1 and said[0] == "indirect;")
            requires.append((args[0], args[1], indirect))
    return module, go, requires


def parsed(text: str) -> tuple[str, str | None, list[tuple[str, str, bool]]] | None:
    """The core's parser, read as the oracle reads; checked to be what the manifest reader says."""
    got = _core.parse_go(text)
    core = (got.module, got.go, [(r.path, r.version, r.indirect) for r in got.requires]) if got.module else None
    go = mf.parse_go_mod(text)
    assert core == (None if go is None else (
        go.module, go.go, [(d.name, d.spec.split(" ", 1)[1], d.kind == "indirect") for d in go.dependencies]))
    assert mf.parse_go_work(text) == tuple(got.uses)
    return core


_PATH = st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9._~/-]{0,24}", fullmatch=True).filter(lambda p: "//" not in p)
_WORD = st.one_of(
    st.sampled_from(["module", "go", "require", "replace", "exclude", "retract", "toolchain", "use", "=>",
                     "(", ")", "require(", "module(", ")x", "v1.2.3", "v0.0.0-20240101000000-abcdef012345",
                     "1.22", "go1.22.1", '""']),
    _PATH,
    _PATH.map(lambda p: f'"{p}"'),
)
_COMMENT = st.sampled_from(["", "//", "// indirect", "//indirect", "// indirect; used by tests", "// indirectly",
                            "// indirect extra", "//\tindirect", "// a comment", "// module x", "/// indirect"])
_SPACE = st.sampled_from([" ", "\t", "  ", " \t ", "\u00a0"])


@st.composite
def go_mod_lines(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        shaped = st.tuples(st.sampled_from([[], ["require"], ["module"], ["use"]]), _WORD, _WORD).map(
            lambda t: [*t[0], t[1], t[2]])  # mostly lines shaped like a directive or a block's line
        words = draw(st.one_of(shaped, st.lists(_WORD, max_size=5)))
        seps = [draw(_SPACE) for _ in words]
        line = draw(st.sampled_from(["", " ", "\t"])) + "".join(w + s for w, s in zip(words, seps))
        line += draw(_COMMENT) + draw(st.sampled_from(["", "\r"]))
        lines.append(line)
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=400, deadline=None)
@given(go_mod_lines())
def test_go_mod_parser_agrees_with_a_plain_oracle(text):
    module, go, requires = oracle(text)
    assert parsed(text) == ((module, go, requires) if module else None)


# --- go.mod: files built from known contents ------------------------------------

_MODULE = st.from_regex(r"[a-z][a-z0-9.-]{0,10}(/[a-zA-Z0-9._~-]{1,10}){0,3}", fullmatch=True)
_VERSION = st.from_regex(r"v[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}(-pre)?", fullmatch=True)


@st.composite
def go_mod_file(draw):
    """(text, module, go version, [(path, version, indirect)]) with the formatting chosen at random."""
    module = draw(_MODULE)
    go = draw(st.sampled_from([None, "1.21", "1.22.3"]))
    requires = draw(st.lists(st.tuples(_MODULE, _VERSION, st.booleans()), max_size=6))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    sp = lambda: draw(st.sampled_from([" ", "\t", "   "]))  # noqa: E731
    quoted = draw(st.booleans())
    out = [draw(st.sampled_from(["", "// Code generated for a test.", "//go:build ignore"]))]
    out.append(f"module{sp()}{chr(34) + module + chr(34) if quoted else module}"
               + draw(st.sampled_from(["", " // the module", "// glued"])))
    if go:
        out.append(f"go{sp()}{go}")
    out.append(draw(st.sampled_from(["", "toolchain go1.22.4", "require ()", "exclude (\n\tbad v1.0.0\n)"])))
    blocked = draw(st.booleans())

    def req(path, version, indirect, head):
        comment = draw(st.sampled_from(["// indirect", "//indirect", "// indirect; for tests"])) if indirect else \
            draw(st.sampled_from(["", "// not indirect", "// indirectly"]))
        return f"{head}{path}{sp()}{version}{sp() if comment else ''}{comment}"

    if blocked and requires:
        out.append(draw(st.sampled_from(["require (", "require(", "require\t(  // deps"])))
        out += [req(p, v, i, draw(st.sampled_from(["\t", "    ", ""]))) for p, v, i in requires]
        out.append(")")
    else:
        out += [req(p, v, i, "require ") for p, v, i in requires]
    out.append(draw(st.sampled_from(["", "replace (\n\trequire v9.9.9 => ./x\n\tmodule => ./y\n)",
                                     "replace example.com/a => ./a // local", "retract v1.0.0 // oops"])))
    return nl.join(out) + nl, module, go, requires


@settings(max_examples=300, deadline=None)
@given(go_mod_file())
def test_go_mod_parser_reads_back_what_a_file_was_built_from(case):
    text, module, go, requires = case
    assert parsed(text) == (module, go, [(p, v, i) for p, v, i in requires])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_go_mod_parser_takes_any_text(text):
    got = mf.parse_go_mod(text)
    assert got is None or got.module
    mf.parse_go_work(text)
    parsed(text)


def test_go_mod_edge_cases():
    assert parsed('module "ex.com/a//b" // the module\n') == ("ex.com/a//b", None, [])
    assert parsed('module "ex.com/\\u0061"\n') == ("ex.com/a", None, [])
    assert parsed("module `ex.com/raw`\n") == ("ex.com/raw", None, [])
    assert parsed("\ufeffmodule ex.com/bom\n") == ("ex.com/bom", None, [])
    assert parsed("module (\n\tex.com/block\n)\n") == ("ex.com/block", None, [])
    assert parsed("module\tex.com/m // comment\n") == ("ex.com/m", None, [])
    assert parsed("module ex.com/first\nmodule ex.com/last\n") == ("ex.com/last", None, [])
    assert parsed('module "a\\x41"\n') == ("a\\x41", None, [])  # not an escape JSON shares: as written
    assert parsed('module "a\\ud800"\n') == ("a\\ud800", None, [])  # a lone surrogate: as written
    assert parsed("module ex.com/\ud800\n") == ("ex.com/\ufffd", None, [])  # not Unicode: U+FFFD
    (req,) = _core.parse_go("module m\nrequire a v1 // indirect\n").requires
    assert (req.path, req.version, req.indirect) == ("a", "v1", True) and isinstance(req, _core.GoRequire)
    assert req == _core.parse_go("require (\n\ta v1 //indirect\n)\n").requires[0]
    assert parsed("go 1.22\nrequire a v1\n") is None  # no module path: not a go.mod
    assert parsed('module ""\n') is None
    assert parsed("module a\nrequire b\nrequire (\n\tc\n\td v1 extra\n)\n") == ("a", None, [("d", "v1", False)])
    assert mf.parse_go_work('go 1.22\nuse (\n\t./a // one\n\t"./b c"\n)\nuse ./d\n') == ("./a", "./b c", "./d")


# --- what each manifest declares -----------------------------------------------


@pytest.fixture
def root(tmp_path):
    fs.confine(str(tmp_path))
    return tmp_path


def test_python_pep621_poetry_and_requirements(root):
    write(root, "pyproject.toml", '[project]\nname = " demo "\nversion = "1.2"\nrequires-python = ">=3.11"\n'
          'dependencies = ["Django[argon2]>=4.2", "Flask_Login", "git+https://x/y.git"]\n'
          '[project.optional-dependencies]\ntest = ["pytest>=8"]\n[project.scripts]\ndemo = "demo:main"\n'
          '[tool.poetry]\nname = "ignored"\ndescription = "From Poetry."\n'
          '[tool.poetry.dependencies]\npython = "^3.11"\nrequests = {version = "^2"}\n[tool.pytest.ini_options]\n')
    write(root, "requirements.txt", "attrs==23.1 \\\n    --hash=sha256:00\nhttps://example.com/x.whl\n"
          "-r base.txt\n./local\nrich  # pretty\n")
    m = mf.read(str(root))
    assert (m.name, m.description, m.version) == ("demo", "From Poetry.", "1.2")
    py = m.python
    assert py.requires_python == ">=3.11" and py.scripts == ("demo",) and py.pytest and py.pyproject
    assert py.main == {"django": "Django[argon2]>=4.2", "flask-login": "Flask_Login", "requests": "requests ^2",
                       "attrs": "attrs==23.1", "rich": "rich"}
    assert py.extra == {"pytest": "pytest>=8"}
    assert m.skipped == () and m.rust is m.js is m.go is None


def test_cargo_workspace_and_dependency_kinds(root):
    write(root, "Cargo.toml", '[package]\nname = "my-crate"\nversion = "0.1.0"\nedition = "2021"\n'
          'rust-version = "1.75"\n[lib]\nname = "mine"\n[workspace]\nmembers = ["crates/*", 3]\nexclude = ["crates/old"]\n'
          '[workspace.dependencies]\nserde = "1"\n[dependencies]\naxum = { version = "0.7" }\n'
          'local = { path = "../local" }\nactix-web = "4"\n[dev-dependencies]\ntokio = "1"\n[build-dependencies]\ncc = "1"\n')
    r = mf.read(str(root)).rust
    assert (r.name, r.version, r.lib_name, r.edition, r.rust_version, r.package) == (
        "my-crate", "0.1.0", "mine", "2021", "1.75", True)
    assert r.members == ("crates/*",) and r.exclude == ("crates/old",)
    assert r.main == {"axum": "axum 0.7", "actix_web": "actix-web 4", "serde": "serde 1"}
    assert r.extra == {"tokio": "tokio 1", "cc": "cc 1"}


def test_package_json_and_pnpm_workspaces(root):
    write(root, "package.json", '{"name": "@acme/web", "description": "Web.", "version": "2.0.0",'
          ' "workspaces": {"packages": ["packages/*", 1]}, "bin": {"web": "cli.js"},'
          ' "engines": {"node": ">=20"}, "packageManager": "pnpm@9.1.0", "scripts": {"test": "vitest", "x": 1},'
          ' "dependencies": {"react": "^18", "ui": "workspace:*", "bad": {"v": 1}},'
          ' "peerDependencies": {"vue": "3"}, "devDependencies": {"typescript": "5", "vue": "3.4"}}')
    write(root, "pnpm-workspace.yaml", "packages:\n  - 'apps/*'\n")
    write(root, "tsconfig.json", "{}")
    m = mf.read(str(root))
    js = m.js
    assert (m.name, m.description, m.version) == ("@acme/web", "Web.", "2.0.0")
    assert js.workspaces == ("packages/*",) and m.pnpm_packages == ("apps/*",)
    assert js.bin and js.node == ">=20" and js.package_manager == "pnpm@9.1.0" and js.scripts == {"test": "vitest"}
    assert js.main == {"react": "react ^18"}
    assert js.extra == {"vue": "vue 3", "typescript": "typescript 5"}  # peer before dev, first spelling wins
    assert "tsconfig.json" in m.files


def test_go_mod_go_work_and_makefile(root):
    write(root, "go.mod", 'module "example.com/svc" // svc\n\ngo 1.22\nrequire (\n\tgithub.com/a/b v1.0.0\n'
          "\tgolang.org/x/net v0.1.0 // indirect\n)\n")
    write(root, "go.work", "go 1.22\nuse (\n\t./svc\n\t./tools // tools\n)\n")
    write(root, "Makefile", "build:\n\tgo build\ntest: build\n\tgo test\n")
    m = mf.read(str(root))
    assert m.name == "svc" and m.go.module == "example.com/svc" and m.go.go == "1.22"
    assert m.go.main == {"github.com/a/b": "github.com/a/b v1.0.0"}
    assert m.go.extra == {"golang.org/x/net": "golang.org/x/net v0.1.0"}
    assert m.go_work == ("./svc", "./tools") and m.make_test


def test_name_order_python_then_js_then_rust_then_go(root):
    write(root, "go.mod", "module example.com/gomod\n")
    assert mf.read(str(root)).name == "gomod"
    write(root, "Cargo.toml", '[package]\nname = "crate"\n')
    assert mf.read(str(root)).name == "crate"
    write(root, "package.json", '{"name": "pkg", "description": "  "}')
    assert mf.read(str(root)).name == "pkg"
    write(root, "pyproject.toml", '[project]\nname = "py"\n')
    m = mf.read(str(root))
    assert m.name == "py" and m.description == "" and list(m.sections()) == ["python", "rust", "js", "go"]


def test_malformed_unreadable_and_mistyped_manifests(root, tmp_path_factory):
    write(root, "pyproject.toml", "[project\n")
    write(root, "Cargo.toml", 'package = "nope"\nlib = 3\nworkspace = ["a"]\n')
    write(root, "package.json", "[1, 2]")
    write(root, "go.mod", "go 1.22\n")
    write(root, "setup.cfg", "[metadata]\n")
    m = mf.read(str(root))
    assert m.skipped == ("go.mod", "package.json", "pyproject.toml")
    assert m.python is not None and not m.python.pyproject  # present through setup.cfg
    assert m.rust is not None and not m.rust.package and m.rust.name is None and m.rust.members == ()
    assert m.js is None and m.go is None and m.name == ""

    (root / "setup.cfg").unlink()
    write(root, "pyproject.toml", '[project]\nname = "strdeps"\ndependencies = "requests"\n'
          'optional-dependencies = ["x"]\n[tool]\npoetry = 1\n')
    py = mf.read(str(root)).python
    assert py.name == "strdeps" and py.dependencies == ()

    outside = tmp_path_factory.mktemp("outside")
    write(outside, "package.json", '{"name": "secret"}')
    (root / "package.json").unlink()
    os.symlink(outside / "package.json", root / "package.json")
    write(root, "Cargo.toml", "x" * (mf.DOCUMENT_CAP + 1))
    m = mf.read(str(root))
    assert m.js is None and m.rust is None and {"Cargo.toml", "package.json"} <= set(m.skipped)


def test_a_line_cut_at_the_cap_is_not_read(root):
    filler = "// " + "x" * 1000 + "\n"
    head = "module example.com/big\n" + filler * ((mf.LINES_CAP - 200) // len(filler))
    pad = mf.LINES_CAP - len(head.encode()) - len("require ")
    text = head + "require " + "a" * (pad + 10) + " v1.0.0\n"
    write(root, "go.mod", text)
    m = mf.read(str(root))
    assert m.go.module == "example.com/big" and m.go.dependencies == ()


def test_reader_reads_each_directory_once(root, monkeypatch):
    write(root, "pyproject.toml", '[project]\nname = "once"\n')
    write(root, "sub/package.json", '{"name": "sub"}')
    reads = []
    real = mf.read
    monkeypatch.setattr(mf, "read", lambda d, names=None: reads.append(d) or real(d, names))
    reader = mf.Reader(str(root))
    assert reader.at("").name == reader.at(".").name == "once"
    reader.learn("sub", ["package.json", "main.js"])
    assert reader.at("sub").name == reader.at("sub/").name == "sub"
    assert len(reads) == 2


# --- project init and init see the same project ---------------------------------

CASES = {
    "pep621": ({"pyproject.toml": '[project]\nname = "alpha"\ndescription = "Alpha does things."\n'
                                  'dependencies = ["FastAPI>=0.110", "httpx"]\n',
                "alpha/__init__.py": '"""Alpha."""\n'}, "alpha", "fastapi"),
    "poetry": ({"pyproject.toml": '[tool.poetry]\nname = "beta"\ndescription = "Beta, by Poetry."\n'
                                  '[tool.poetry.dependencies]\npython = "^3.11"\nDjango = "^4.2"\n',
                "beta/__init__.py": ""}, "beta", "django"),
    "requirements": ({"requirements.txt": "flask==3.0\ngit+https://example.com/x.git\n", "app.py": "import flask\n"},
                     None, "flask"),
    "npm": ({"package.json": '{"name": "gamma", "description": "Gamma UI.", "dependencies": {"next": "14"}}',
             "index.js": "export const a = 1;\n"}, "gamma", "next.js"),
    "cargo": ({"Cargo.toml": '[package]\nname = "delta"\ndescription = "Delta crate."\n[dependencies]\naxum = "0.7"\n'
                             'mine = { path = "mine" }\n', "src/lib.rs": "pub fn f() {}\n"}, "delta", "axum"),
    "go": ({"go.mod": 'module "example.com/epsilon" // quoted, with a comment\n\ngo 1.22\n\nrequire(\n'
                      "\tgithub.com/gin-gonic/gin v1.9.1\n\tgolang.org/x/net v0.20.0 // indirect\n)\n",
            "main.go": "package main\n\nfunc main() {}\n"}, "epsilon", "gin"),
    "several": ({"pyproject.toml": '[build-system]\nrequires = ["maturin"]\n',
                 "package.json": '{"name": "zeta-web", "description": "Zeta.", "dependencies": {"react": "18"}}',
                 "Cargo.toml": '[package]\nname = "zeta"\n[dependencies]\npyo3 = "0.22"\n',
                 "index.js": "export const a = 1;\n", "src/lib.rs": "pub fn f() {}\n"}, "zeta-web", "react"),
}


# A lock file in some cases: (file, the project file's package manager, init's).
LOCKED = {"pep621": ("pdm.lock", "PDM", "pdm"), "poetry": ("poetry.lock", "Poetry", "poetry"),
          "npm": ("yarn.lock", "Yarn", "yarn")}


@pytest.mark.parametrize("case", list(CASES))
def test_project_init_and_init_see_the_same_project(tmp_path, case):
    files, name, framework = CASES[case]
    for rel, text in files.items():
        write(tmp_path, rel, text)
    if case in LOCKED:
        write(tmp_path, LOCKED[case][0], "")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    run_cli("project", "init", cwd=tmp_path, check=True)
    run_cli("init", cwd=tmp_path, check=True)
    project = yaml.safe_load((tmp_path / ".repoctx" / "project.yaml").read_text())
    context = yaml.safe_load((tmp_path / ".context.yaml").read_text())

    expected = name or tmp_path.name
    assert project["project"]["name"] == context["project"]["name"] == expected
    read = mf.read(str(tmp_path))
    assert read.name == (name or "")
    if read.description:
        assert context["project"]["description"] == read.description
    # The same dependencies: init lists the root's declared ones; the scan names the same framework.
    declared = sorted({spec for s in read.sections().values() for spec in s.main.values()})
    assert sorted(context.get("dependencies", {}).get("external", [])) == declared
    assert context["project"]["framework"] == framework
    stack = {s.lower().replace(" ", "-") for s in project["tech"]["stack"]}
    assert framework in stack
    if case in LOCKED:  # both read the one table of lock files
        assert (project["tech"]["package_manager"], context["project"]["package_manager"]) == LOCKED[case][1:]


def test_lock_files_name_the_package_manager(root):
    for name in ("yarn.lock", "uv.lock", "Pipfile", "package.json"):
        write(root, name, "{}")
    m = mf.read(str(root))
    assert (m.locked_by(), m.locked_by("js"), m.locked_by("python"), m.locked_by("go")) == ("uv", "yarn", "uv", None)
    assert mf.read(str(root / "nowhere")).locked_by() is None
