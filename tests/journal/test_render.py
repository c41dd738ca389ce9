"""render(): facts to topic files and MEMORY.md — deterministic, never over budget."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from journal_mem.journal.anchor import CodeChange
from journal_mem.journal.cache import TopicStore, changed_rows, topics_path
from journal_mem.journal.entry import IMPORTANCE
from journal_mem.journal.fold import Fact, Fold, fact_row, rank, ranked, ranked_since
from journal_mem.journal.render import (
    Earlier,
    Rendered,
    code_key,
    fact_line,
    over_budget,
    render,
)
from journal_mem.layout import TOPICS
from journal_mem.schema import Budget

DAY = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)


def fact(key: str, title: str = "", *, topic: str = "general", kind: str = "semantic",
         importance: str = "medium", holders: tuple[str, ...] = ("api",), body: str = "",
         minutes: int = 0) -> Fact:
    return Fact(key=key, title=title or f"Fact {key}", body=body, topic=topic, type=kind,
                confidence=1.0 if kind == "principle" else 0.8, importance=importance,
                created=DAY + dt.timedelta(minutes=minutes), holders=holders,
                path=f"{holders[0]}/journal/2026-05-01-{key}.md")


def fold_of(*facts: Fact) -> Fold:
    return Fold(facts={f.key: f for f in facts})


def memory(out: dict[str, bytes], agent: str = "api") -> str:
    return out[f"{agent}/MEMORY.md"].decode()


def test_memory_md_lists_principles_first_then_topics_with_keys() -> None:
    files = render(fold_of(fact("p", "Always pin versions", kind="principle", topic="build"),
                           fact("t", "Run tests serially", topic="testing", importance="high")),
                   ["api"], Budget()).files
    text = memory(files)
    assert text.index("## Principles") < text.index("## testing")
    # every fact line links the fact's heading in its topic file
    assert "- [Always pin versions](topics/build.md#always-pin-versions) [p]\n" in text
    assert "- [Run tests serially](topics/testing.md#run-tests-serially) [t]\n" in text
    assert text.endswith("\n2 live facts: 2 here, 0 more only in the topic files (topics/).\n")
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_topic_file_holds_title_body_and_provenance_citing_the_entry() -> None:
    files = render(fold_of(fact("t", "Run tests serially", body="Shared DB.", topic="testing")),
                   ["api"], Budget()).files
    topic = files["api/topics/testing.md"].decode()
    assert "## Run tests serially\nShared DB.\n> key `t` · semantic" in topic
    assert "entry api/journal/2026-05-01-t.md" in topic


def test_a_fact_reaches_every_holder_and_agents_without_facts_get_a_memory_md() -> None:
    files = render(fold_of(fact("t", holders=("api", "web"))), ["api", "docs", "web"],
                   Budget()).files
    assert "[t]" in memory(files, "web") and "[t]" in memory(files, "api")
    assert "[t]" not in memory(files, "docs")


def test_a_shared_fact_is_anchored_apart_from_each_holders_own_headings() -> None:
    """A fact's block and heading id are made once per render, for all its holders; each
    file still tells a repeated heading apart by its own headings."""
    shared = fact("s", "Retry the upload", body="Twice.", topic="net", holders=("api", "web"))
    own = fact("o", "Retry the upload", topic="net", importance="high", holders=("api",))
    files = render(fold_of(shared, own), ["api", "web"], Budget()).files
    api, web = (files[f"{a}/topics/net.md"].decode() for a in ("api", "web"))
    assert api.count("## Retry the upload\n") == 2 and "## Retry the upload\nTwice." in web
    assert "(topics/net.md#retry-the-upload-1) [s]" in memory(files, "api")
    assert "(topics/net.md#retry-the-upload) [o]" in memory(files, "api")
    assert "(topics/net.md#retry-the-upload) [s]" in memory(files, "web")


def test_long_titles_are_shortened_with_an_ellipsis_in_memory_md_only() -> None:
    title = "word " * 29 + "end"
    files = render(fold_of(fact("k", title)), ["api"], Budget(line_chars=60)).files
    line = next(x for x in memory(files).splitlines() if x.endswith("[k]"))
    assert len(line) <= 60 and "…" in line
    assert title in files["api/topics/general.md"].decode()


def test_what_does_not_fit_memory_md_stays_in_the_topic_file() -> None:
    facts = [fact(f"k{i:03d}", minutes=i) for i in range(300)]
    out = render(fold_of(*facts), ["api"], Budget(topic_lines=2000))
    text = memory(out.files)
    assert not over_budget(text, Budget())
    assert out.agents["api"].in_memory < 300
    here = out.agents["api"].in_memory
    assert f"300 live facts: {here} here, {300 - here} more only in the topic files" in text
    assert out.agents["api"].evicted == []


def test_what_does_not_fit_five_topic_files_is_reported_evicted() -> None:
    facts = [fact(f"k{i:03d}", body="line\n" * 5, minutes=i) for i in range(40)]
    out = render(fold_of(*facts), ["api"], Budget(topic_lines=20))
    names = ["general", "general-2", "general-3", "general-4", "general-5"]
    assert out.agents["api"].parts == {"general": names}
    topics = "".join(out.files[f"api/topics/{n}.md"].decode() for n in names)
    assert all(out.files[f"api/topics/{n}.md"].count(b"\n") <= 20 for n in names)
    evicted = out.agents["api"].evicted
    assert len(evicted) == 15 and all(f"`{k}`" not in topics for k in evicted)
    last = out.files["api/topics/general-5.md"].decode()
    assert "15 more facts on this topic are only in the journal" in last
    assert all(f"[{k}]" not in memory(out.files) for k in evicted)
    assert memory(out.files).endswith(
        "40 live facts: 25 here, 0 more only in the topic files (topics/), 15 only in the "
        "journal (no room; `jmem recall` finds them).\n")


def test_200_topic_lines_hold_at_least_60_facts() -> None:
    body = "A body of several lines.\nIt goes on.\n\nAnd on, with a long tail " + "x" * 400
    facts = [fact(f"k{i:03d}", f"A realistic title of fact number {i}", body=body, minutes=i)
             for i in range(80)]
    out = render(fold_of(*facts), ["api"], Budget())
    first = out.files["api/topics/general.md"].decode()
    assert first.count("\n") <= 200 and first.count("> key `") >= 60
    assert "(more in its entry)" in first
    assert out.agents["api"].evicted == [] and out.agents["api"].parts["general"] == [
        "general", "general-2"]


def test_a_part_never_takes_another_topics_name() -> None:
    facts = [fact(f"k{i:03d}", minutes=i) for i in range(30)]
    facts.append(fact("own", topic="general-2"))
    out = render(fold_of(*facts), ["api"], Budget(topic_lines=20))
    assert out.agents["api"].parts["general"][:2] == ["general", "general-3"]
    assert "`own`" in out.files["api/topics/general-2.md"].decode()


def test_the_footer_counts_every_live_fact_once() -> None:
    facts = [fact(f"k{i:03d}", minutes=i) for i in range(80)]
    out = render(fold_of(*facts), ["api"], Budget(topic_lines=10, memory_lines=20))
    report = out.agents["api"]
    assert report.in_topics + len(report.evicted) == 80
    text = memory(out.files)
    assert (f"80 live facts: {report.in_memory} here, "
            f"{report.in_topics - report.in_memory} more only") in text
    assert f"{len(report.evicted)} only in the journal" in text


def test_rendering_is_deterministic() -> None:
    facts = [fact(f"k{i}", topic=f"t{i % 3}", minutes=i % 4) for i in range(30)]
    assert render(fold_of(*facts), ["api"], Budget()).files == \
        render(fold_of(*reversed(facts)), ["api"], Budget()).files


# --- property: never over any budget -----------------------------------------

TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\n\r\x00"), min_size=1,
               max_size=150).map(str.strip).filter(bool)


@st.composite
def facts_and_budget(draw: st.DrawFn) -> tuple[list[Fact], Budget]:
    count = draw(st.integers(0, 120))
    facts = [
        fact(f"k{i}-" + "x" * draw(st.integers(0, 60)), draw(TEXT),
             topic=draw(st.sampled_from(["a", "b", "topic-" + "z" * 50])),
             kind=draw(st.sampled_from(["semantic", "principle"])),
             importance=draw(st.sampled_from(["critical", "high", "medium", "low"])),
             body=draw(st.sampled_from(["", "one line", "many\n" * 30])), minutes=i)
        for i in range(count)
    ]
    budget = Budget(memory_lines=draw(st.integers(10, 250)),
                    memory_bytes=draw(st.integers(1000, 30000)),
                    line_chars=draw(st.integers(40, 200)), topic_lines=draw(st.integers(10, 300)))
    return facts, budget


@settings(max_examples=200, deadline=None)
@given(facts_and_budget())
def test_memory_md_is_never_over_any_budget_and_no_fact_is_lost(
    case: tuple[list[Fact], Budget],
) -> None:
    facts, budget = case
    out = render(fold_of(*facts), ["api"], budget)
    text = memory(out.files)
    assert over_budget(text, budget) == []
    for path, data in out.files.items():
        if "/topics/" in path:
            assert data.decode().count("\n") <= budget.topic_lines
    topics = "".join(d.decode() for p, d in out.files.items() if "/topics/" in p)
    evicted = set(out.agents["api"].evicted)
    for f in facts:  # every fact is in its topic file or reported evicted
        assert (f"key `{f.key}`" in topics) != (f.key in evicted)


def test_fact_lines_are_links_that_keep_markdown_and_cannot_break() -> None:
    titles = {"e": "**Never** add `style={{…}}` props", "b": "Brackets ] [x](http://evil) \\",
              "c": "<!-- hidden --> text", "h": "# not a heading"}
    out = render(fold_of(*(fact(k, t, topic="web") for k, t in titles.items())), ["api"],
                 Budget()).files
    text = memory(out)
    topic = out["api/topics/web.md"].decode()
    assert "- [**Never** add `style={{…}}` props](topics/web.md#never-add-style-props) [e]" in text
    assert "- [Brackets \\] \\[x\\](http://evil) \\\\](topics/web.md#brackets--x-) [b]" \
        in text
    assert "<!--" not in text and "-->" not in text
    assert "- [# not a heading](topics/web.md#-not-a-heading) [h]" in text
    assert "## \\# not a heading" in topic


def test_a_footer_clipped_longer_than_its_worst_case_never_breaks_the_byte_budget() -> None:
    """The footer is reserved at its worst counts before the facts are chosen, but a
    clipped line drops its cut word's trailing space, so the real footer can come out a
    byte longer (a MEMORY.md of 1,900 bytes against 1,899 was found this way). Every
    byte budget and width around the edge, on the same facts: never over."""
    facts = [fact(f"k{i}", f"Lesson number {i} on the build", minutes=i) for i in range(55)]
    fold = fold_of(*facts)
    for width in range(40, 80):
        for size in range(1200, 2600, 7):
            budget = Budget(memory_lines=200, memory_bytes=size, line_chars=width)
            text = memory(render(fold, ["api"], budget).files)
            assert over_budget(text, budget) == [], (width, size)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab *_`\\[]()!-<>#"), min_size=1, max_size=30))
def test_a_title_survives_its_link_and_renders_as_in_its_topic_file(title: str) -> None:
    """A fact's MEMORY.md link holds whatever the title: `unlinked` gives the title back,
    and the link's text renders as the title does (a title's own `\\*` is not doubled
    into a backslash shown before emphasis) — but for a title's own escaped backslash or
    bracket, which the link must escape once more to give the title back, for a
    backslash in a code span (escaped too: shown doubled; left alone), and for emphasis
    (the link's brackets change how CommonMark pairs `*` and `_`: `*<**` renders as
    `*<**` in a link, `<*` outside one)."""
    from journal_mem.journal.render import _text_of, link_text, unlinked

    text = " ".join(title.split())
    if not text or "<!--" in text or "-->" in text:
        return
    line = f"[{link_text(text)}](topics/t.md)"
    assert unlinked(line) == text
    if not any(f"\\{c}" in text for c in "\\[]") and not set("`*_") & set(text):
        assert _text_of(line) == _text_of(text.replace("[", "\\[").replace("]", "\\]"))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \t\n\\[]()!-*`<>~{}é"), max_size=24))
def test_a_link_text_is_the_escape_pattern_applied_whatever_the_title(title: str) -> None:
    """`link_text` skips its pattern for a title without a backslash or bracket: it gives
    what the pattern gives on every title, with or without them."""
    from journal_mem.journal.render import _LINK_TEXT_RE, _unhidden, link_text

    whole = _LINK_TEXT_RE.sub(lambda m: m[1] or "\\" + m[2], " ".join(title.split()))
    assert link_text(title) == _unhidden(whole)


def test_an_escaped_asterisk_in_a_title_is_not_escaped_again() -> None:
    from journal_mem.journal.render import _text_of, link_text

    title = "The \\*\\*staging\\*\\* env"
    assert link_text(title) == title
    assert _text_of(f"[{link_text(title)}](topics/t.md)") == "The **staging** env"


def test_a_flagged_fact_cut_to_fit_keeps_its_own_value_beside_the_correction() -> None:
    """On a tight line both values stay: the correction's new one and the flagged fact's
    own (its holder compares them; "The maps batch size i…28 since the upgrade" showed
    neither the old value nor what it was about)."""
    old = fact("hand-38", "The maps batch size is Q3528 since the upgrade", topic="maps")
    new = fact("maps-has", "Maps has a batch size of Q2715", topic="maps", holders=("web",))
    folded = fold_of(old, new)
    folded.conflicts = [("hand-38", "maps-has")]
    for width in range(90, 131):
        text = memory(render(folded, ["api", "web"], Budget(line_chars=width)).files)
        line = next(x for x in text.splitlines() if x.endswith("[hand-38]"))
        assert "Q2715" in line and "Q3528" in line, (width, line)
        assert len(line) <= width
    line = fact_line(old, 50, False, "maps")
    assert line is not None and "- [The maps " in line and "…" in line, line  # its middle


def on_disk(now: Rendered, earlier: Rendered) -> dict[str, bytes]:
    """The files as a distill leaves them: those `now` rendered, and those it reused as
    `earlier` (rendered from nothing) wrote them. Not `now.every_file()`, which renders
    the reused ones again from the facts of now."""
    before = earlier.every_file()
    return {**now.files, **{rel: before[rel] for rel in now.kept}}


def earlier_of(earlier: Rendered, fold: Fold) -> Earlier:
    """What a distill hands the next render: the topics and MEMORY.md files, and the rows
    they came from."""
    return Earlier(earlier.topics, {key: fact_row(f) for key, f in fold.facts.items()},
                   memory=earlier.memory, order=earlier.order)


def _conflicts(fold: Fold, random: Any) -> None:
    """Maybe mark some of `fold`'s facts as possibly outdated by another of its facts (a
    MEMORY.md line and a "possibly outdated" note each)."""
    keys = sorted(fold.facts)
    if len(keys) > 1 and random.random() < 0.4:
        fold.conflicts = [(random.choice(keys), random.choice(keys))
                          for _ in range(random.randrange(1, 4))]


@settings(max_examples=150, deadline=None)
@given(facts_and_budget(), facts_and_budget(), st.randoms(use_true_random=False))
def test_a_render_reusing_an_earlier_one_gives_the_same_bytes(
    first: tuple[list[Fact], Budget], second: tuple[list[Fact], Budget],
    random: Any,
) -> None:
    """A render reuses a topic or a MEMORY.md only when its whole input is the same: after
    any change (facts added, dropped or edited in any field, holders changed, another
    budget, code that changed, corrections that mark a fact) it gives exactly the bytes
    of a render from nothing."""
    facts, budget = first
    was = fold_of(*facts)
    if facts and random.random() < 0.3:  # one fact's cited code had changed then
        was.code = {facts[0].key: [CodeChange("src/a.py", "abc1234", "earlier")]}
    _conflicts(was, random)
    earlier = render(was, ["api", "web"], budget)
    kept = [f for f in facts if random.random() < 0.7]
    edited = [_edited(f, random) if random.random() < 0.2 else f for f in kept]
    later = fold_of(*edited, *second[0][:random.randrange(0, 10)])
    if random.random() < 0.3:  # the same facts: only what else a MEMORY.md reads changes
        later = fold_of(*facts)
    elif random.random() < 0.2:  # one agent left with no facts: none of its topics left
        gone = random.choice(["api", "web"])
        later = fold_of(*(f for f in facts if gone not in f.holders))
    if later.facts and random.random() < 0.3:  # its cited code changed since
        key = random.choice(sorted(later.facts))
        later.code = {key: [CodeChange("src/a.py", "abc1234", random.choice(
            ["earlier", "later"]))]}
    if random.random() < 0.5:
        later.conflicts = list(was.conflicts)
    _conflicts(later, random)
    handed = earlier_of(earlier, was)
    rows = {key: fact_row(f) for key, f in later.facts.items()}
    # the distill hands over the keys it found changed (`cache.changed_rows`)
    told = Earlier(handed.topics, handed.rows, changed_rows(handed.rows, rows),
                   handed.memory, handed.order)
    for now in (budget, second[1]):
        fresh = render(later, ["api", "web"], now)
        for handed_over in (handed, told):
            reused = render(later, ["api", "web"], now, handed_over)
            assert on_disk(reused, earlier) == fresh.files
            assert reused.every_file() == fresh.files
            assert not set(reused.files) & set(reused.kept)
            assert reused.agents == fresh.agents
            assert reused.order == fresh.order  # ranked going on from the earlier order


def test_a_memory_md_is_reused_only_while_its_topics_and_marks_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Same facts and nothing else changed: MEMORY.md is not rendered again. A correction
    that marks one of its facts, or another budget, renders it again."""
    from journal_mem.journal import render as render_module

    facts = [fact(f"k{i}", f"Lesson {i}", topic=f"t{i % 2}", minutes=i) for i in range(6)]
    was = fold_of(*facts)
    earlier = render(was, ["api"], Budget())
    calls: list[str] = []
    real = render_module.render_memory
    monkeypatch.setattr(render_module, "render_memory",
                        lambda agent, *a, **k: (calls.append(agent), real(agent, *a, **k))[1])
    same = render(fold_of(*facts), ["api"], Budget(), earlier_of(earlier, was))
    assert calls == [] and on_disk(same, earlier) == earlier.files
    marked = fold_of(*facts)
    marked.conflicts = [("k1", "k4")]
    again = render(marked, ["api"], Budget(), earlier_of(earlier, was))
    assert calls == ["api"] and "possibly outdated by [k4]" in memory(again.files)
    assert on_disk(again, earlier) == render(marked, ["api"], Budget()).files
    calls.clear()
    smaller = render(fold_of(*facts), ["api"], Budget(memory_lines=12),
                     earlier_of(earlier, was))
    assert calls == ["api"]
    assert on_disk(smaller, earlier) == render(fold_of(*facts), ["api"],
                                               Budget(memory_lines=12)).files
    alone = fact("solo", "The web agent's only lesson", holders=("web",))
    two = render(fold_of(*facts, alone), ["api", "web"], Budget())
    assert "[solo]" in memory(two.files, "web")
    gone = render(fold_of(*facts), ["api", "web"], Budget(), earlier_of(two, fold_of(*facts,
                                                                                    alone)))
    assert "[solo]" not in memory(gone.files, "web")  # none of its topics left: not reused


def _edited(fact: Fact, random: Any) -> Fact:
    """`fact` with one field changed, as a correction or a new holder changes it."""
    field_name, value = random.choice([
        ("body", fact.body + " edited"), ("title", fact.title + " now"),
        ("importance", "high" if fact.importance != "high" else "low"),
        ("confidence", 0.5), ("type", "principle"), ("source", "a review"),
        ("created", fact.created + dt.timedelta(days=1)),
        ("path", fact.path.replace(".md", "-2.md")),
        ("holders", (*fact.holders, "web") if "web" not in fact.holders else ("api",)),
    ])
    return fact._replace(**{field_name: value})


def test_a_render_reuses_exactly_the_topics_whose_input_is_unchanged() -> None:
    facts = [fact(f"k{i}", f"Lesson {i}", topic=f"t{i % 4}", minutes=i) for i in range(40)]
    was = fold_of(*facts)
    earlier = render(was, ["api"], Budget())
    facts[5] = facts[5]._replace(title="Lesson five, reworded")  # topic t1
    later = render(fold_of(*facts), ["api"], Budget(), earlier_of(earlier, was))
    reused = {t for t, v in later.topics.items() if v is earlier.topics.get(t)}
    assert reused == {("api", "t0"), ("api", "t2"), ("api", "t3")}
    assert set(later.kept) == {"api/topics/t0.md", "api/topics/t2.md", "api/topics/t3.md"}
    assert on_disk(later, earlier) == render(fold_of(*facts), ["api"], Budget()).files


def test_a_rendering_is_judged_against_the_rows_it_was_rendered_from() -> None:
    """The rows a render is handed are those of the fold its topics came from: handed the
    rows of another fold (one the topics were never rendered from), a changed fact whose
    row equals those rows is wrongly reused, and its file on disk, rendered from the old
    fact, stays; `FoldCache.rows_of` hands the right ones."""
    one = fold_of(fact("k1", "Lesson one", body="first"))
    two = fold_of(fact("k1", "Lesson one", body="second"))
    from_one = render(one, ["api"], Budget())
    again = render(two, ["api"], Budget(), earlier_of(from_one, one))
    assert again.every_file() == render(two, ["api"], Budget()).files
    assert b"second" in again.files["api/topics/general.md"] and not again.kept
    wrong = render(two, ["api"], Budget(), earlier_of(from_one, two))
    assert "api/topics/general.md" in wrong.kept  # why the token matters


def test_renderings_kept_by_other_code_are_never_reused(tmp_path: Path) -> None:
    """The kept renderings are keyed by the code that rendered them (`code_key`): after an
    upgrade that changes how a topic file reads, nothing is reused."""
    kept = render(fold_of(fact("k1", "Lesson one")), ["api"], Budget()).topics
    TopicStore(str(tmp_path), code_key()).save(kept, "token-1")
    store = TopicStore(str(tmp_path), code_key())
    assert (store.token, store.topics) == ("token-1", kept)
    other = TopicStore(str(tmp_path), "another version")
    assert (other.token, other.topics) == ("", {})
    assert len(code_key()) == 32


def _topics(n: int, tag: str = "") -> dict[Any, Any]:
    return {("api", f"t{i}"): (f"k{i}", (200, ()), [(f"t{i}", (i, 1, 2, 3))], [],
                               f"t{i}#k{i}{tag}") for i in range(n)}


def test_the_kept_renderings_are_a_base_and_a_delta_of_what_changed(tmp_path: Path) -> None:
    """A save that changes a few topics of many writes only those, and those gone, beside
    the base; a later load gives every topic as saved, under the last token. A delta
    past a fifth of the base writes the base again."""
    state = str(tmp_path)
    TopicStore(state, "code").save(_topics(400), "t1")
    base = Path(topics_path(state))
    base_bytes = base.read_bytes()
    store = TopicStore(state, "code")
    second = dict(store.topics)
    second[("api", "t3")] = _topics(400, "-moved")[("api", "t3")]
    del second[("api", "t7")]
    second[("ops", "new")] = _topics(1)[("api", "t0")]
    store.save(second, "t2")
    assert base.read_bytes() == base_bytes  # only the delta written
    delta = Path(f"{base}.delta")
    assert delta.stat().st_size < len(base_bytes) // 20
    again = TopicStore(state, "code")
    assert (again.token, again.topics) == ("t2", second)
    third = dict(again.topics)
    third[("api", "t3")] = _topics(400)[("api", "t3")]  # as the base has it: not in a delta
    again.save(third, "t3")
    got = TopicStore(state, "code")
    assert (got.token, got.topics) == ("t3", third)
    assert len(got.base) == 400 and ("api", "t3") in got.base
    # a fifth of the base changed: written whole, the delta gone
    fourth = {**third, **{k: v for k, v in _topics(400, "-all").items()
                          if int(k[1][1:]) < 100}}
    got.save(fourth, "t4")
    assert not delta.exists() and base.read_bytes() != base_bytes
    last = TopicStore(state, "code")
    assert (last.token, last.topics, last.base) == ("t4", fourth, fourth)


def test_a_delta_of_another_base_is_not_read(tmp_path: Path) -> None:
    """A delta names its base by the base's token: the base written again (another token)
    leaves an older delta unread, whatever happened to it."""
    state = str(tmp_path)
    TopicStore(state, "code").save(_topics(100), "b1")
    store = TopicStore(state, "code")
    changed = {**store.topics, ("api", "t1"): _topics(100, "-x")[("api", "t1")]}
    store.save(changed, "d1")
    stale = tmp_path / "old-delta"
    shutil.copy(f"{topics_path(state)}.delta", stale)
    TopicStore(state, "code").save(_topics(100, "-y"), "b2")  # all changed: a new base
    shutil.copy(stale, f"{topics_path(state)}.delta")  # an older delta, put back
    store = TopicStore(state, "code")
    assert (store.token, store.topics) == ("b2", _topics(100, "-y"))


_KEYS = st.text("abcdefghij-", min_size=1, max_size=30)
_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
# a short title after long ones is what fits in the last few bytes
_TITLES = st.one_of(st.text(_CHARS, min_size=1, max_size=3),
                    st.text(_CHARS, min_size=60, max_size=120))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_KEYS, _TITLES, st.sampled_from(["a", "b", "c"]),
                          st.booleans()), min_size=1, max_size=80, unique_by=lambda t: t[0]),
       st.integers(10, 200), st.integers(1000, 2500), st.integers(20, 120), st.booleans(),
       st.sets(_KEYS), st.sampled_from(["a", "a-long-topic-name-of-many-words"]))
@example([(f"k{n}", "x" * 100, "a", False) for n in range(30)] + [("z", "y", "a", False)],
         200, 1000, 120, False, set(), "a")
@example([(f"k{n}", "x" * 100, "a", False) for n in range(30)] + [("z", "y", "a", False)],
         200, 1000, 120, True, set(), "a")
def test_memory_md_skips_only_facts_that_cannot_fit(
        rows: list[tuple[str, str, str, bool]], lines: int, size: int, width: int,
        linked: bool, flagged: set[str], file: str) -> None:
    """A fact whose line cannot fit in the bytes left is skipped without rendering it
    (`LINE_FLOOR`, `least_bytes`): MEMORY.md is byte for byte what rendering every line
    would give, with or without links, with correction marks."""
    import pytest

    from journal_mem.journal import render as module

    facts = [fact(key, title, topic=topic, kind="principle" if principle else "semantic")
             for key, title, topic, principle in rows]
    budget = Budget(memory_lines=lines, memory_bytes=size, line_chars=width)
    placed = {f.key: f"{file}-{f.topic}#{f.key}" for f in facts} if linked else {}
    outdated = {key: ("newer-key", "A newer lesson that says 3 things") for key in flagged}
    skipping = module.render_memory("api", facts, budget, placed=placed, outdated=outdated)
    with pytest.MonkeyPatch.context() as patch:  # every line rendered and weighed
        patch.setattr(module, "LINE_FLOOR", -(10**6))
        patch.setattr(module, "least_bytes", lambda *_: -(10**6))
        every = module.render_memory("api", facts, budget, placed=placed, outdated=outdated)
    assert skipping == every


# titles a link escapes, cuts and joins: brackets, backslashes, runs of spaces, wide text
_LINK_TITLES = st.one_of(
    st.text(st.sampled_from("ab []\\*_`<!-->é漢 \n\t"), min_size=1, max_size=200),
    st.text(_CHARS, min_size=1, max_size=200))


@settings(max_examples=1000, deadline=None)
@given(_KEYS, _LINK_TITLES, st.sampled_from(["", "a", "a#k", "a-long-topic-name#anchor-of-it"]),
       st.integers(20, 160), st.booleans())
@example("k", "y", "a", 120, False)
@example("k", "[" * 90, "a", 120, False)
@example("k", "a " + "\\" * 80, "a", 100, False)
@example("a", "00000", "a", 29, False)  # a whole title past half the room: counted cut
def test_no_line_is_shorter_than_its_least_bytes(key: str, title: str, file: str,
                                                  width: int, flagged: bool) -> None:
    """`least_bytes` is a floor of the line `fact_line` makes, and for a plain title that
    fits in half the room beside its link (a file named without an anchor) it is that
    line's size: the skip loses no fact that fits, and skips most that do not. Given the
    bytes left, it tells a line that cannot fit in them as it does without them."""
    from journal_mem.journal.render import _nbytes, fact_line, least_bytes

    one = fact(key, title)
    outdated = ("newer-key", "A newer lesson that says 3 things") if flagged else None
    line = fact_line(one, width, False, file, outdated)
    least = least_bytes(one, file, width, flagged)
    if line is not None:
        assert least <= _nbytes(line)
    for left in range(least - 3, least + 3):  # asked with the bytes left: the same answer
        assert (least_bytes(one, file, width, flagged, left) > left) == (least > left)
    tail = len(f"]({TOPICS}/{file.partition('#')[0]}.md) [{key}]")
    plain = title.isascii() and title.isalnum()
    room = width - 3 - tail
    fits = room >= 8 and len(title) <= room // 2  # whole, and counted whole by the floor
    if file and "#" not in file and not flagged and plain and fits:
        assert line is not None and least == _nbytes(line)


def test_a_topic_is_rendered_again_when_its_code_room_or_sibling_topics_change() -> None:
    """What `render_topic` reads besides the facts' rows (`render._inputs`): the text of
    each change of the code a fact cites, the room, and the agent's other topics (a part
    file never takes another topic's name)."""
    facts = [fact(f"k{i}", f"Lesson {i} " + "word " * 30, topic="t", minutes=i)
             for i in range(12)]
    was = fold_of(*facts)
    earlier = render(was, ["api"], Budget(topic_lines=20))
    assert "api/topics/t-2.md" in earlier.files
    cited = fold_of(*facts)
    cited.code = {"k0": [CodeChange("src/a.py", "abc1234", "moved the retry loop")]}
    for later, budget in ((cited, Budget(topic_lines=20)), (fold_of(*facts), Budget()),
                          (fold_of(*facts, fact("x", "Other", topic="t-2")),
                           Budget(topic_lines=20))):
        again = render(later, ["api"], budget, earlier_of(earlier, was))
        assert on_disk(again, earlier) == render(later, ["api"], budget).files
        assert not {"api/topics/t.md", "api/topics/t-2.md"} <= set(again.kept)
    again = render(cited, ["api"], Budget(topic_lines=20), earlier_of(earlier, was))
    assert any(b"moved the retry loop" in data for rel, data in again.files.items()
               if "/topics/" in rel)


ZONES = [dt.UTC, dt.timezone(dt.timedelta(hours=2)), dt.timezone(dt.timedelta(hours=-7))]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]),
                          st.sampled_from(["semantic", "principle", "episodic"]),
                          st.sampled_from(IMPORTANCE),
                          st.sampled_from([0.5, 0.8, 0.8, 1.0, 0.0]),
                          st.integers(-3, 3), st.sampled_from(range(len(ZONES)))),
                max_size=40))
def test_ranked_is_the_order_rank_gives(rows: list[tuple[str, str, str, float, int, int]]
                                        ) -> None:
    """Sorting field by field gives the order of `rank`'s tuples, ties of every field and
    one instant in several zones included."""
    facts = [Fact(key=f"{key}{n}" if n % 3 else key, title="t", body="", topic="x",
                  type=kind, confidence=confidence, importance=importance,
                  created=(DAY + dt.timedelta(hours=hours)).astimezone(ZONES[zone]),
                  holders=("api",), path=f"api/journal/{n}.md")
             for n, (key, kind, importance, confidence, hours, zone) in enumerate(rows)]
    assert ranked(facts) == sorted(facts, key=rank)
    assert [id(f) for f in ranked(facts)] == [id(f) for f in sorted(facts, key=rank)]


_RANKED = st.tuples(st.sampled_from(["semantic", "principle", "episodic"]),
                    st.sampled_from(IMPORTANCE), st.sampled_from([0.5, 0.8, 1.0, 0.0]),
                    st.integers(-3, 3), st.sampled_from(range(len(ZONES))))


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=3), _RANKED, max_size=40),
       st.dictionaries(st.text("abcdef", min_size=1, max_size=3), st.none() | _RANKED,
                       max_size=12))
def test_facts_ranked_going_on_from_an_earlier_order_are_ranked(
        before: dict[str, tuple[str, str, float, int, int]],
        changes: dict[str, tuple[str, str, float, int, int] | None]) -> None:
    """`ranked_since`: facts changed in any field `rank` reads, added or dropped since an
    earlier set, put among the others in that set's order, are in `ranked`'s order (ties
    of every field, one instant in several zones); an order or a list of changes that
    does not account for each fact once gives None."""
    def made(key: str, kind: str, importance: str, confidence: float, hours: int,
             zone: int) -> Fact:
        return Fact(key=key, title="t", body="", topic="x", type=kind, confidence=confidence,
                    importance=importance, holders=("api",), path=f"api/journal/{key}.md",
                    created=(DAY + dt.timedelta(hours=hours)).astimezone(ZONES[zone]))

    was = {key: made(key, *fields) for key, fields in before.items()}
    order = [f.key for f in ranked(was.values())]
    now = dict(was)
    for key, fields in changes.items():
        if fields is None:
            now.pop(key, None)
        else:
            now[key] = made(key, *fields)
    changed = {key for key, f in now.items() if was.get(key) != f}
    going_on = ranked_since(now, order, changed)
    assert going_on is not None
    assert [id(f) for f in going_on] == [id(f) for f in ranked(now.values())]
    added = [key for key in now if key not in was]
    if added:  # a new fact the changes do not name
        assert ranked_since(now, order, changed - {added[0]}) is None
    same = [key for key in order if key in now and key not in changed]
    if len(same) > 1:  # one key twice in the order, another not in it: as many keys
        twice = [same[0] if key == same[1] else key for key in order]
        assert ranked_since(now, twice, changed) is None


def test_ranked_orders_a_date_without_a_zone_as_rank_does() -> None:
    """A fact made with a date that has no zone (never a valid entry's) beside zoned ones:
    the dates cannot be compared, so they are ordered by `timestamp()`, as by `rank`."""
    zoned = [fact(f"k{n}", minutes=n * 90) for n in range(4)]
    naive = fact("naive")._replace(created=dt.datetime(2026, 5, 1, 2, 0))
    facts = [*zoned, naive]
    assert ranked(facts) == sorted(facts, key=rank)
