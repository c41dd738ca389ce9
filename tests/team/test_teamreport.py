"""`jmem report`, rendered in a real headless Chromium (Debian's `chromium`, driven by
Playwright): no console error, one lane per holder, lesson text shown as text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import git, jmem

from fixtures import six_agents
from journal_mem.journal.reader import read_journal
from journal_mem.repo import open_context
from journal_mem.team import report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def render_page(page_path: Path, shot: Path) -> tuple[list[str], object]:
    """Open the page; (console errors and page errors, facts found per lane count)."""
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (.ci/run installs Debian's package)")
    sync_api = pytest.importorskip("playwright.sync_api")
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(page_path.as_uri())
        facts = page.eval_on_selector_all(
            ".fact", "els => els.map(e => [e.querySelector('h3').textContent,"
                     " e.querySelectorAll('.lane').length])")
        titles = page.eval_on_selector_all(".fact h3", "els => els.map(e => e.textContent)")
        injected = page.evaluate("window.__pwned === true")
        page.fill("#filter", "nothing matches this")
        hidden = page.eval_on_selector_all(
            ".fact", "els => els.every(e => e.offsetParent === null)")
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    return problems, (facts, titles, injected, hidden)


def test_report_renders_the_story_in_chromium(tmp_path: Path) -> None:
    repo = six_agents.build(tmp_path / "six")
    assert jmem(repo, "distill", "--date", "2026-03-02").returncode == 0
    six_agents.correct(repo)
    hostile = "<script>window.__pwned = true</script> & <b>bold</b>"
    assert jmem(repo, "write", "--agent", "web", "--topic", "search", "--title",
                "Search " + hostile, "--applies-to", "api", stdin="x").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "corrections")
    assert jmem(repo, "distill", "--date", "2026-03-25").returncode == 0
    proc = jmem(repo, "report", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    page = Path(proc.stdout.strip())
    assert page == tmp_path / "out" / "index.html"
    html = page.read_text()
    assert "<script>window.__pwned" not in html and "&lt;script&gt;" in html
    shot = tmp_path / "report.png"
    problems, (facts, titles, injected, hidden) = render_page(page, shot)  # type: ignore[misc]
    assert problems == []
    lanes = dict((title.split(" [")[0].strip(), n) for title, n in facts)
    assert lanes["Filter by value never matches a document missing the field"] == 6
    assert any(hostile in t for t in titles) and injected is False
    assert hidden is True
    assert shot.stat().st_size > 10_000


def test_each_timeline_lists_every_entry_that_states_supersedes_or_retracts_its_keys(
        tmp_path: Path) -> None:
    """The entries beside a fact's lanes, found through one index of what each entry names
    (a scan of every entry per fact was half of `report` at 10k lessons): the same as
    that scan, on the six-agent story with its corrections and a retraction."""
    repo = six_agents.build(tmp_path / "six")
    assert jmem(repo, "distill", "--date", "2026-03-02").returncode == 0
    six_agents.correct(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "day 24: two corrections")
    assert jmem(repo, "write", "--agent", "api", "--topic", "ops", "--title",
                "Retract the day-one note", "--retracts", six_agents.WRONG_KEY,
                "--body", "gone").returncode == 0
    assert jmem(repo, "distill", "--date", str(six_agents.DISTILL_DATE)).returncode == 0
    ctx = open_context(str(repo))
    entries = read_journal(ctx.layout, ctx.policy).entries
    found = report.timelines(ctx, entries)
    assert found and any(len(t.entry_dates) > 1 for t in found)
    _, succ = report._chains(entries)
    for timeline in found:
        chain = set(report._chain(timeline.key, succ))
        assert timeline.entry_dates == sorted(
            (e.created.date(), f"{e.agent}: {e.title}") for _, e in entries
            if e.key in chain or chain & (set(e.supersedes) | set(e.retracts))), timeline.key
