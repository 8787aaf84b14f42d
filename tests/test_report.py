"""`repoctx report`: one self-contained page whose numbers agree with `status --json`,
opened in headless Chromium (expand a scope, search, screenshot)."""

from __future__ import annotations

import base64
import json
import re

import pytest

from cdp import Browser, find_chromium
from conftest import run_cli
from sample_repo import build_sample_repo

MODULES = 300  # more scopes than fit on screen: the tree must draw only what is visible


@pytest.fixture
def repo(tmp_path):
    root = build_sample_repo(tmp_path / "repo")
    for i in range(MODULES):
        d = root / "pkg" / f"mod{i:03d}"
        d.mkdir(parents=True)
        (d / "code.py").write_text(f"def f{i}():\n    return {i}\n" * 300)
    return root


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
    assert out.returncode == 1 and "outside the repository" in out.stdout
    assert not (tmp_path / "elsewhere.html").exists()
    out = run_cli("report", "--root", str(repo), "--out", "-")
    assert out.returncode == 0 and out.stdout.startswith("<!doctype html>")


def test_report_in_headless_chromium(repo, tmp_path):
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
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
