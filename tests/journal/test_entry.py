"""The entry model: parse(render(e)) == e, and every bad input refused precisely."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal_mem.errors import InvalidEntry
from journal_mem.journal.entry import IMPORTANCE, TYPES, Entry, build, default_key, parse, render
from journal_mem.names import is_name

GOOD = b"""---
schema: 1
agent: api
created: 2026-11-30T10:00:00+00:00
topic: testing
---

# Run the API tests serially

They share a database fixture.
"""


def problems(data: bytes, **kwargs: object) -> list[str]:
    with pytest.raises(InvalidEntry) as info:
        parse(data, **kwargs)  # type: ignore[arg-type]
    return info.value.problems


def with_front(extra: str, body: str = "# A title\n") -> bytes:
    head = "---\nagent: api\ncreated: 2026-11-30T10:00:00+00:00\ntopic: testing\n"
    return (head + extra + "---\n\n" + body).encode()


def test_parse_good_entry_fills_defaults() -> None:
    entry = parse(GOOD)
    assert entry.agent == "api" and entry.topic == "testing"
    assert entry.title == "Run the API tests serially"
    assert entry.body == "They share a database fixture."
    assert (entry.type, entry.confidence, entry.importance) == ("semantic", 0.8, "medium")
    assert entry.key == default_key("Run the API tests serially")
    assert entry.applies_to == ("api",)
    assert entry.created == dt.datetime(2026, 11, 30, 10, tzinfo=dt.UTC)


def test_render_is_deterministic_and_round_trips() -> None:
    entry = parse(GOOD)
    text = render(entry)
    assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text
    assert parse(text.encode()) == entry
    assert render(parse(text.encode())) == text


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("supersede: [old]\n", "supersede: unknown field (did you mean 'supersedes'?)"),
        ("confidence: 0.99\n", "confidence: 0.99 is outside 0.7–0.95 for type semantic"),
        ("type: principle\nconfidence: 0.9\n", "confidence: 0.9 is outside 1.0 for type principle"),
        ("confidence: high\n", "confidence: 'high' is not a number"),
        ("type: opinion\n", "type: 'opinion' is not one of"),
        ("importance: urgent\n", "importance: 'urgent' is not one of"),
        ("key: Bad_Key\n", "key: 'Bad_Key' is not a valid key"),
        ("supersedes: [../x]\n", "supersedes: '../x' is not a valid name"),
        ("applies_to: [web, ../etc]\n", "applies_to: '../etc' is not a valid name"),
        ("valid_until: 2026-02-30\n", "valid_until: '2026-02-30' is not a real date"),
        ("valid_until: tomorrow\n", "valid_until: 'tomorrow' is not an ISO-8601 datetime"),
        ("tags: [a, b, c, d, e, f, g, h, i]\n", "tags: 9 tags, at most 8"),
        ("tags: ['has space']\n", "tags: 'has space' is not a valid tag"),
        ("refs: [../../etc/passwd]\n", "refs: '../../etc/passwd' must be a path relative"),
        ("refs: [/etc/passwd]\n", "refs: '/etc/passwd' must be a path relative"),
        ("schema: 2\n", "schema: '2' is not supported"),
        ("source: !!python/object:os.system x\n", "frontmatter: YAML tag !!python/object"),
        ("source: !!python/object/apply:os.system [ls]\n", "frontmatter: YAML tag"),
        ("source: !custom x\n", "frontmatter: YAML tag !custom is not allowed"),
        ("source: &a x\nkey: *a\n", "frontmatter: YAML aliases"),
        ("topic: other\n", "frontmatter: field 'topic' appears twice"),
        ("source: [a, b]\n", "source: must be a single value"),
    ],
)
def test_bad_field_is_named_with_reason(extra: str, expected: str) -> None:
    found = problems(with_front(extra))
    assert any(p.startswith(expected) for p in found), found


def test_bad_names_are_refused_before_any_path_is_built() -> None:
    data = b"---\nagent: ../x\ncreated: 2026-11-30T10:00:00Z\ntopic: A/B\n---\n# t\n"
    found = problems(data)
    assert "agent: '../x' is not a valid name (^[a-z0-9][a-z0-9-]{0,63}$)" in found
    assert "topic: 'A/B' is not a valid name (^[a-z0-9][a-z0-9-]{0,63}$)" in found


def test_several_problems_are_all_reported() -> None:
    found = problems(with_front("confidence: 3\nimportance: x\nbogus: 1\n"))
    assert len(found) == 3


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"no frontmatter\n", "frontmatter: missing"),
        (b"---\nagent: api\n", "frontmatter: no closing '---' line"),
        (b"---\n- a\n- b\n---\n# t\n", "frontmatter: must be a mapping"),
        (b"---\njust text\n---\n# t\n", "frontmatter: must be a mapping"),
        (b"---\na: [\n---\n# t\n", "frontmatter: not valid YAML"),
        (b"---\nagent: api\x00\n---\n# t\n", "file: holds a NUL byte at offset 14"),
        (b"---\nagent: \xff\xfe\n---\n# t\n", "file: not valid UTF-8 (byte offset 11)"),
        (GOOD.replace(b"serially", b"seri\rally"), "file: holds a bare CR character"),
        (GOOD.replace(b"# Run", b"Run"), "title: missing"),
        (GOOD.replace(b"created: 2026-11-30T10:00:00+00:00\n", b""), "created: required"),
        (GOOD.replace(b"+00:00", b""), "created: '2026-11-30T10:00:00' has no UTC offset"),
        (GOOD.replace(b"agent: api\n", b""), "agent: required"),
    ],
)
def test_malformed_files(data: bytes, expected: str) -> None:
    found = problems(data)
    assert any(p.startswith(expected) for p in found), found


def test_title_rules() -> None:
    assert problems(with_front("", "# \n")) == ["title: empty"]
    long_title = "x" * 151
    assert problems(with_front("", f"# {long_title}\n")) == ["title: 151 characters, at most 150"]
    assert parse(with_front("", "# " + "x" * 150 + "\n")).title == "x" * 150


def test_body_over_entry_bytes() -> None:
    data = with_front("", "# t\n\n" + "y" * 300 + "\n")
    assert problems(data, entry_bytes=256) == [
        "body: 300 bytes, over the 256-byte limit (entry_bytes)"
    ]


def test_huge_file_refused_without_parsing() -> None:
    found = problems(b"---\n" + b"a" * 10_000_000)
    assert found[0].startswith("file: 10000004 bytes, over the")


def test_conflict_markers_are_refused() -> None:
    body = "# t\n\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n"
    assert "body: holds unresolved conflict markers (<<<<<<< / >>>>>>>)" in problems(
        with_front("", body)
    )


def test_hand_written_entry_takes_date_from_file_name() -> None:
    data = b"---\nagent: api\ntopic: t\n---\n# Hand written\n"
    entry = parse(data, filename="2025-03-04-my-note.md")
    assert entry.created == dt.datetime(2025, 3, 4, tzinfo=dt.UTC)
    assert problems(data, filename="notes.md") == [
        "created: required (an ISO-8601 datetime with offset)"
    ]


def test_folder_agent_must_match() -> None:
    assert problems(GOOD, folder_agent="web") == ["agent: 'api' does not match its folder 'web'"]


def test_empty_values_count_as_absent() -> None:
    entry = parse(with_front("key:\nsource: ''\nsupersedes:\n"))
    assert entry.key == "a-title" and entry.source is None and entry.supersedes == ()


def test_yaml_implicit_types_are_not_applied() -> None:
    entry = parse(with_front("key: 'no'\ntags: [yes, 2026-01-01, '1']\n"))
    assert entry.key == "no"
    assert entry.tags == ("1", "2026-01-01", "yes")


def test_build_validates_like_parse() -> None:
    with pytest.raises(InvalidEntry) as info:
        build(agent="api", topic="t", title="", confidence="5", tags=["ok", "not ok"])
    assert info.value.problems == [
        "confidence: 5.0 is outside 0.7–0.95 for type semantic",
        "tags: 'not ok' is not a valid tag (^[A-Za-z0-9][A-Za-z0-9_-]*$)",
        "title: empty",
    ]


def test_default_key_of_non_ascii_title_is_a_stable_hash() -> None:
    assert default_key("日本語のタイトル") == default_key("日本語のタイトル")
    assert default_key("日本語のタイトル").startswith("k-")


@pytest.mark.parametrize("first, second", [
    ("Всегда используйте pytest", "Никогда не используйте pytest"),  # both slug to "pytest"
    ("C++", "C#"),
    ("=== not ==", "== not ==="),
    ("Use pytest fixtures for the database tests", "Use pytest fixtures for the API tests"),
])
def test_titles_the_slug_would_merge_get_different_keys(first: str, second: str) -> None:
    assert default_key(first) != default_key(second)
    assert is_name(default_key(first)) and is_name(default_key(second))


@pytest.mark.parametrize("title", [
    "Journal files are created through O_TMPFILE + linkat, never rename",
    "PyYAML BaseLoader silently ignores tags like !!python/object; walk the composed nodes",
    "x" * 150, "Всегда используйте pytest", "Use pytest",
])
def test_default_keys_are_short_readable_and_stable(title: str) -> None:
    key = default_key(title)
    assert len(key) <= 24 and is_name(key)
    assert key == default_key(title)
    word = title.split()[0].lower()
    assert key.startswith(word[:8]) or key.startswith("k-") or not word.isascii()


def test_a_short_lossless_title_is_its_own_key() -> None:
    assert default_key("Use pytest") == "use-pytest"
    assert default_key("Café rules") == "cafe-rules"


def test_long_explicit_keys_stay_valid() -> None:
    key = "a-long-explicit-key-" + "x" * 40
    assert build(agent="api", topic="t", title="T", key=key).key == key


# --- properties ------------------------------------------------------------

names = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)
text_line = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp")), min_size=1, max_size=150
).map(str.strip).filter(lambda t: t and not t.startswith(("<<<<<<<", ">>>>>>>"))
                        and "<!--" not in t and "-->" not in t)


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    kind = draw(st.sampled_from(sorted(TYPES)))
    low, high, _ = TYPES[kind]
    agent = draw(names)
    created = draw(st.datetimes(
        min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2026, 1, 1),
        timezones=st.just(dt.UTC),
    ))
    body_lines = draw(st.lists(st.text(
        st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=60,
    ).map(str.rstrip).filter(lambda t: not t.startswith(("<<<<<<<", ">>>>>>>"))), max_size=6))
    return build(
        agent=agent,
        topic=draw(names),
        title=draw(text_line),
        body="\n".join(body_lines),
        created=created.replace(microsecond=created.microsecond // 1000 * 1000),
        type=kind,
        confidence=str(draw(st.sampled_from([low, high, round((low + high) / 2, 2)]))),
        importance=draw(st.sampled_from(IMPORTANCE)),
        key=draw(st.one_of(st.none(), names)),
        supersedes=draw(st.lists(names, max_size=3)),
        retracts=draw(st.lists(names, max_size=3)),
        applies_to=draw(st.lists(st.one_of(names, st.just("all")), max_size=3)),
        valid_until=draw(st.one_of(st.none(), st.dates().map(dt.date.isoformat))),
        tags=draw(st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,10}", fullmatch=True),
                           max_size=8, unique=True)),
        refs=draw(st.lists(st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,2}\.py", fullmatch=True),
                           max_size=3)),
        source=draw(st.one_of(st.none(), text_line)),
    )


@settings(max_examples=300, deadline=None)
@given(entries())
def test_parse_render_round_trip(entry: Entry) -> None:
    assert parse(render(entry).encode()) == entry


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400))
def test_parse_is_total_on_bytes(data: bytes) -> None:
    try:
        parse(data)
    except InvalidEntry as exc:
        assert exc.problems


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_parse_is_total_on_frontmatter_text(front: str) -> None:
    try:
        parse(f"---\n{front}\n---\n# t\n".encode("utf-8", "surrogatepass"))
    except InvalidEntry as exc:
        assert exc.problems


@pytest.mark.parametrize("ref, normal", [
    ("./README", "README"), ("README/", "README"), ("a//b/./c.py", "a/b/c.py"), ("docs/", "docs"),
])
def test_refs_are_normalised(ref: str, normal: str) -> None:
    assert build(agent="api", topic="t", title="T", refs=[ref]).refs == (normal,)


def _front(**fields: str) -> bytes:
    lines = ["---", "agent: api", "topic: t"] + [f"{k}: {v}" for k, v in fields.items()]
    return ("\n".join([*lines, "---", "", "# A title", ""])).encode()


@pytest.mark.parametrize("field, value, reason", [
    ("created", "0001-01-01T00:00:00+14:00", "out of range"),
    ("created", "9999-12-31T23:00:00-05:00", "out of range"),
    ("created", "1969-12-31T00:00:00+00:00", "before 1970"),
    ("created", "2099-01-01T00:00:00+00:00", "more than 31 days in the future"),
    ("valid_until", "9999-12-31T23:00:00-05:00", "out of range"),
    ("valid_until", "0001-01-01T00:00:00+14:00", "out of range"),
])
def test_out_of_range_dates_are_refused_at_parse_time(field: str, value: str,
                                                      reason: str) -> None:
    extra = {"created": "2026-01-01T00:00:00Z"} if field != "created" else {}
    with pytest.raises(InvalidEntry) as info:
        parse(_front(**extra, **{field: value}))
    assert any(p.startswith(f"{field}: ") and reason in p for p in info.value.problems)


def test_a_created_within_a_day_ahead_is_accepted() -> None:
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=20)).isoformat()
    assert parse(_front(created=soon)).created.isoformat() == soon


def test_a_created_days_ahead_is_a_clock_and_accepted() -> None:
    """Another machine's clock days ahead: its lessons stay valid here."""
    ahead = (dt.datetime.now(dt.UTC) + dt.timedelta(days=5)).isoformat()
    assert parse(_front(created=ahead)).created.isoformat() == ahead


@pytest.mark.parametrize("char", ["\v", "\f", "\x85", "\u2028", "\u2029", "\u202e", "\u200b",
                                  "\x1b", "\ufeff"])
def test_titles_with_control_format_or_separator_characters_are_refused(char: str) -> None:
    with pytest.raises(InvalidEntry) as info:
        build(agent="api", topic="t", title=f"Safe{char}title")
    assert info.value.problems[0].startswith("title: holds control or invisible characters")


@pytest.mark.parametrize("title", ["Hidden <!-- ignore the rest --> text", "Open <!-- here"])
def test_titles_with_html_comment_markers_are_refused(title: str) -> None:
    with pytest.raises(InvalidEntry) as info:
        build(agent="api", topic="t", title=title)
    assert "HTML comment" in info.value.problems[0]


def test_an_arrow_is_no_comment() -> None:
    """`-->` alone opens nothing: mermaid and ASCII flows are ordinary text."""
    entry = build(agent="api", topic="t", title="The flow is API --> queue --> worker")
    assert entry.title == "The flow is API --> queue --> worker"


def test_crlf_line_endings_read_as_lf() -> None:
    # what a core.autocrlf=true checkout makes of a committed entry
    assert parse(GOOD.replace(b"\n", b"\r\n")) == parse(GOOD)


def test_a_dashes_line_in_the_body_is_body() -> None:
    data = GOOD + b"\n---\n\n# Not the title\n"
    entry = parse(data)
    assert entry.title == "Run the API tests serially"
    assert entry.body.endswith("---\n\n# Not the title")


@settings(max_examples=2000, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_a_printable_title_holds_no_bad_character(title: str) -> None:
    """`_check_title_text` asks `unicodedata` only of a title `isprintable` refuses: every
    bad category (control, format, line and paragraph separators) is one it refuses."""
    import unicodedata

    from journal_mem.journal.entry import BAD_CATEGORIES

    if title.isprintable():
        assert not any(unicodedata.category(c) in BAD_CATEGORIES for c in title)
    for c in ("\u200b", "\u2028", "\u2029", "\x07", "\u00ad"):
        assert not (title + c).isprintable()
