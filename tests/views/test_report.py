"""`repoctx report`: one self-contained page whose numbers agree with `status --json`,
opened in headless Chromium (expand a scope, search, filter by state, find what needs
attention, screenshot), its layout checked at a desktop's and a phone's width."""

from __future__ import annotations

import base64
import json
import re

import pytest

from cdp import Browser, find_chromium
from conftest import mcp_client, run_cli
from sample_repo import build_sample_repo, write_context

MODULES = 300  # more scopes than fit on screen: the tree must draw only what is visible
LONG = "lib/a_directory_name_long_enough_to_be_cut_in_any_column_of_the_tree_" + "x" * 40
STALE = "lib/a/b/c"  # stale under three fresh parents


@pytest.fixture
def repo(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    for i in range(MODULES):
        d = root / "pkg" / f"mod{i:03d}"
        d.mkdir(parents=True)
        (d / "code.py").write_text(f"def f{i}():\n    return {i}\n" * 300)
    for d in (STALE, LONG):
        (root / d).mkdir(parents=True)
        (root / d / "code.py").write_text("def g():\n    return 0\n" * 300)
    write_context(root, STALE, "Deep.", fingerprint="00000000")
    write_context(root, LONG, "A summary long enough to run past the end of its column on any screen, " * 3)
    for scope in ("lib/a/b", "lib/a", "lib"):  # children first: a parent's fingerprint sees them
        write_context(root, scope, f"The {scope} part.")
    return root


def need_chromium() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
    return path


def open_page(browser: Browser, page, width: int) -> None:
    browser.page("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1,
                 mobile=width < 600)
    browser.page("Page.navigate", url=page.as_uri())
    browser.wait_for("document.readyState === 'complete' && document.getElementById('n-scopes').textContent !== ''")


def rows(browser: Browser) -> list[str]:
    return browser.js("[...document.querySelectorAll('#tree .row')].map(r => r.dataset.path)")


def _status(root) -> dict:
    out = run_cli("status", "--json", "--root", str(root))
    return json.loads(out.stdout)


def test_report_is_self_contained_and_agrees_with_status(repo):
    out = run_cli("report", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    html = (repo / ".repoctx/report.html").read_text()
    status = _status(repo)
    counts = {s: sum(1 for e in status["entries"] if e["state"] == s) for s in ("fresh", "stale", "missing")}
    assert f"{status['total_directories']} scopes ({counts['fresh']} fresh, {counts['stale']} stale, " \
           f"{counts['missing']} missing)" in out.stdout
    # No network: nothing fetched from anywhere, and a policy that forbids it.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "default-src 'none'" in html
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    assert [s[0] for s in data["scopes"]] == [e["scope"] for e in status["entries"]]
    assert data["coverage"]["scopes"] == status["total_directories"]


def test_report_refuses_a_path_outside_and_prints_with_dash(repo, tmp_path):
    out = run_cli("report", "--root", str(repo), "--out", "../elsewhere.html")
    assert out.returncode == 1 and "outside the repository" in out.stderr
    assert not (tmp_path / "elsewhere.html").exists()
    out = run_cli("report", "--root", str(repo), "--out", "-")
    assert out.returncode == 0 and out.stdout.startswith("<!doctype html>")


def test_report_in_headless_chromium(repo, tmp_path):
    chromium = need_chromium()
    assert run_cli("report", "--root", str(repo)).returncode == 0
    status = _status(repo)
    counts = {s: sum(1 for e in status["entries"] if e["state"] == s) for s in ("fresh", "stale", "missing")}
    browser = Browser(chromium, str(tmp_path / "profile"))
    try:
        browser.page("Page.enable")
        browser.page("Emulation.setDeviceMetricsOverride", width=1200, height=900, deviceScaleFactor=1, mobile=False)
        browser.page("Page.navigate", url=(repo / ".repoctx/report.html").as_uri())
        browser.wait_for("document.readyState === 'complete' && document.getElementById('n-scopes').textContent !== ''")
        shown = browser.js("Object.fromEntries(['scopes','tracked','fresh','stale','missing','skipped']"
                           ".map(k => [k, Number(document.getElementById('n-' + k).textContent)]))")
        assert shown == {"scopes": status["total_directories"], "tracked": status["tracked"],
                         "skipped": status["skipped_directories"], **counts}
        assert "SPEC-001" in browser.js("document.getElementById('artifact-table').textContent")

        # Expand everything: far fewer rows in the DOM than scopes (drawn lazily).
        rows = "document.querySelectorAll('#tree .row').length"
        browser.click("#expand")
        browser.wait_for("document.querySelector('#tree .row[data-path=\"pkg/mod000\"]') !== null")
        assert 0 < browser.js(rows) < MODULES
        # Collapse, then open `pkg` with a click on its row.
        browser.click("#collapse")
        browser.wait_for("document.querySelector('#tree .row[data-path=\"pkg\"]') !== null")
        assert browser.js("document.querySelector('#tree .row[data-path=\"pkg/mod000\"]')") is None
        browser.click('#tree .row[data-path="pkg"] .tog')
        browser.wait_for("document.querySelector('#tree .row[data-path=\"pkg/mod000\"]') !== null")

        # Search: only the matching scope and its ancestors are left.
        browser.click("#search")
        browser.page("Input.insertText", text="mod042")
        browser.wait_for("document.getElementById('search-count').textContent === '1 matching scope'")
        paths = browser.js("[...document.querySelectorAll('#tree .row')].map(r => r.dataset.path)")
        assert paths == [".", "pkg", "pkg/mod042"]

        shot = browser.page("Page.captureScreenshot", format="png")["data"]
        (tmp_path / "report.png").write_bytes(base64.b64decode(shot))
        assert (tmp_path / "report.png").stat().st_size > 1000
    finally:
        browser.close()


# Every box of the page in its place: the cells of a tree row, the coverage cards and the
# tools side by side without overlapping, nothing drawn past its own box unless clipped
# (a cut name ends in an ellipsis), table cells holding their text, and no page wider
# than the window.
LAYOUT_PROBLEMS = """(() => {
  const problems = [], shown = (e) => getComputedStyle(e).display !== 'none' && e.getClientRects().length;
  const name = (e) => (e.closest('.row') ? e.closest('.row').dataset.path + ' ' : '') + (e.id || e.className || e.tagName);
  const page = document.documentElement;
  // clientWidth: the layout's width (a phone's innerWidth grows to fit a page too wide for it)
  if (page.scrollWidth > page.clientWidth) problems.push(`the page is ${page.scrollWidth}px wide in ${page.clientWidth}px`);
  const boxes = ['.cards', '#tools', '#tree .row', '#attention li'];
  for (const box of document.querySelectorAll(boxes.join(','))) {
    const cells = [...box.children].filter(shown), outer = box.getBoundingClientRect();
    // Each box of a cell: one for a block, one per line for text that wraps.
    const parts = (e) => [...e.getClientRects()];
    cells.forEach((a, i) => {
      const style = getComputedStyle(a);
      for (const r of parts(a))
        if (r.right > outer.right + 0.5 || r.left < outer.left - 0.5) problems.push(`${name(a)} sticks out of ${name(box)}`);
      if (style.display !== 'inline' && style.overflowX === 'visible' && a.scrollWidth > a.clientWidth + 1)
        problems.push(`${name(a)}: its text runs out of it`);
      for (const b of cells.slice(i + 1))
        for (const r of parts(a)) for (const q of parts(b)) {
          const w = Math.min(r.right, q.right) - Math.max(r.left, q.left), h = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
          if (w > 0.5 && h > 0.5) problems.push(`${name(a)} and ${name(b)} overlap`);
        }
    });
  }
  for (const cell of document.querySelectorAll('td, th'))
    if (shown(cell) && cell.scrollWidth > cell.clientWidth + 1) problems.push(`table cell ${cell.textContent.slice(0, 30)}: text runs out`);
  for (const s of document.querySelectorAll('.scroll'))
    if (s.scrollWidth > s.clientWidth + 1) problems.push(`${s.firstElementChild.id} is wider than the window`);
  return problems;
})()"""


@pytest.mark.anyio
async def test_report_layout_at_desktop_and_phone_widths(repo, tmp_path):
    async with mcp_client("--root", str(repo)) as client:  # a session, for the sessions table
        await client.call_tool("list_contexts", {})
    assert run_cli("report", "--root", str(repo)).returncode == 0
    browser = Browser(need_chromium(), str(tmp_path / "profile"))
    try:
        browser.page("Page.enable")
        for width in (1280, 390):
            open_page(browser, repo / ".repoctx/report.html", width)
            assert browser.js("document.getElementById('session-table').rows.length") == 2
            browser.click("#expand")
            browser.wait_for(f"document.querySelector('#tree .row[data-path=\"{LONG}\"]') !== null")
            assert browser.js(LAYOUT_PROBLEMS) == [], width
            # The long name is cut, with its full path in the row's tooltip.
            cut = browser.js(f"(() => {{ const r = document.querySelector('#tree .row[data-path=\"{LONG}\"]');"
                             " const n = r.querySelector('.name > span:last-child');"
                             " return [n.scrollWidth > n.clientWidth, r.title.startsWith(r.dataset.path)]; })()")
            assert cut == [True, True]
            shot = browser.page("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
            (tmp_path / f"report-{width}.png").write_bytes(base64.b64decode(shot))
        # On a phone the tokens, ages and summaries give way; the name, state and counts stay.
        assert browser.js("getComputedStyle(document.querySelector('#tree .row .sum')).display") == "none"
    finally:
        browser.close()


def test_what_needs_attention_is_in_sight_and_only_can_narrow_the_tree(repo, tmp_path):
    browser = Browser(need_chromium(), str(tmp_path / "profile"))
    try:
        browser.page("Page.enable")
        assert run_cli("report", "--root", str(repo)).returncode == 0
        open_page(browser, repo / ".repoctx/report.html", 1280)
        # The stale scope is on screen without a click: its fresh parents are open.
        assert rows(browser)[:6] == [".", "docs", "lib", "lib/a", "lib/a/b", STALE]
        assert browser.js(f"document.querySelector('#tree .row[data-path=\"{STALE}\"]').dataset.state") == "stale"
        assert "2 stale" in browser.js("document.querySelector('#tree .row[data-path=\".\"] .below').textContent")
        # The list of what needs attention: stale first, and a click finds a scope in the tree.
        listed = browser.js("[...document.querySelectorAll('#attention a')].map(a => a.dataset.path)")
        assert listed[:2] == ["lib/a/b/c", "src"] and "pkg/mod150" in listed
        browser.click('#attention a[data-path="pkg/mod150"]')
        browser.wait_for("document.querySelector('#tree .row.flash[data-path=\"pkg/mod150\"]') !== null")

        # --only: the tree shows those states (and their parents) until the page is told otherwise.
        out = run_cli("report", "--root", str(repo), "--only", "stale,missing")
        assert out.returncode == 0, out.stdout + out.stderr
        open_page(browser, repo / ".repoctx/report.html", 1280)
        ticked = browser.js("[...document.querySelectorAll('#states input')].map(b => [b.value, b.checked])")
        assert ticked == [["fresh", False], ["stale", True], ["missing", True]]
        status = _status(repo)
        state = {e["scope"]: e["state"] for e in status["entries"]}
        wanted = {s for s, st in state.items() if st in ("stale", "missing")}
        shown = rows(browser)
        assert wanted & set(shown) and all(state[p] != "fresh" or any(w.startswith(p + "/") or p == "." for w in wanted)
                                          for p in shown if p in state)
        assert LONG not in shown
        browser.click('#states input[value="fresh"]')
        browser.wait_for(f"document.querySelector('#tree .row[data-path=\"{LONG}\"]') !== null")
    finally:
        browser.close()
    out = run_cli("report", "--root", str(repo), "--only", "stale,old")
    assert out.returncode == 1 and "--only old: not a state" in out.stderr


def test_fresh_coverage_is_never_rounded_up(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".context.config.yaml").write_text("min_tokens: 0\n")
    for i in range(355):
        (root / f"m{i:03d}").mkdir()
        (root / f"m{i:03d}/code.py").write_text("x = 1\n")
        write_context(root, f"m{i:03d}", "A module.")
    write_context(root, ".", "The root.", fingerprint="00000000")  # 355 of 356 fresh
    browser = Browser(need_chromium(), str(tmp_path / "profile"))
    coverage = "[document.getElementById('n-coverage').textContent, document.getElementById('coverage-of').textContent]"
    try:
        browser.page("Page.enable")
        assert run_cli("report", "--root", str(root)).returncode == 0
        open_page(browser, root / ".repoctx/report.html", 390)
        assert browser.js(coverage) == ["99.7%", "(355 of 356)"]
        assert browser.js(LAYOUT_PROBLEMS) == []
        assert run_cli("rehash", ".", "--root", str(root)).returncode == 0
        assert run_cli("report", "--root", str(root)).returncode == 0
        open_page(browser, root / ".repoctx/report.html", 390)
        assert browser.js(coverage) == ["100%", "(356 of 356)"]
        assert browser.js("document.getElementById('attention').textContent") == "Every scope is fresh."
    finally:
        browser.close()


def test_report_help_says_where_out_may_write():
    help_text = " ".join(run_cli("report", "--help").stdout.split())
    assert "or an absolute path anywhere you may write" in help_text and "--only" in help_text


def test_an_invalid_context_file_is_shown_invalid_with_its_place(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/code.py").write_text("x = 1\n")
    (root / ".context.config.yaml").write_text("min_tokens: 0\n")
    write_context(root, ".", "The root.")
    (root / "src/.context.yaml").write_text('version: 1\nsummary: "open\nscope: src\n')
    status = _status(root)
    why = next(e for e in status["entries"] if e["scope"] == "src")["invalid"]
    place = f"src/.context.yaml:{why['line']}:{why['column']}: {why['reason']}"
    out = run_cli("report", "--root", str(root))
    assert out.returncode == 0 and "2 scopes (1 fresh, 0 stale, 1 invalid, 0 missing)" in out.stdout, out.stdout
    browser = Browser(need_chromium(), str(tmp_path / "profile"))
    try:
        browser.page("Page.enable")
        for width in (1280, 390):
            open_page(browser, root / ".repoctx/report.html", width)
            assert browser.js("document.getElementById('n-invalid').textContent") == "1"
            assert browser.js("document.querySelector('#tree .row[data-path=\"src\"]').dataset.state") == "invalid"
            assert place in browser.js("document.getElementById('attention').textContent")
            assert browser.js(LAYOUT_PROBLEMS) == [], width
    finally:
        browser.close()
