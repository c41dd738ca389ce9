"""Fuzzed entries (hypothesis): `parse` raises nothing but `InvalidEntry`, and whatever it
accepts folds and renders within budget."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal_mem.errors import InvalidEntry
from journal_mem.journal.entry import FIELDS, Entry, parse, render
from journal_mem.journal.fold import fold
from journal_mem.journal.render import over_budget
from journal_mem.journal.render import render as render_files
from journal_mem.schema import Config

pytestmark = pytest.mark.reliability
VALID = render(Entry(agent="api", topic="testing", title="Run the tests with -p no:randomly",
                     created=dt.datetime(2026, 5, 1, tzinfo=dt.UTC), key="run-tests",
                     body="They share one fixture.", tags=("ci",), refs=("src/app.py",),
                     source="PR #1", supersedes=("old",))).encode()

# Building blocks of hostile frontmatter: YAML syntax, tags, anchors, odd scalars.
YAML_BITS = st.sampled_from([
    "!!python/object/apply:os.system ['id']", "!!binary aGk=", "&a x", "*a", "[1, [2]]",
    "{a: b}", "|\n  block", ">-\n  folded", "~", "null", "yes", "0x1F", "1e999", "'", '"',
    "- item", "? complex", "!!str x", "!custom x", "\t", "\u2028", "\ufeff", "../../etc",
    "/abs/path", "all", "api", "2026-02-30", "2026-05-01T00:00:00", "0.5", "1.0", "-1",
    "<<<<<<< HEAD", "a" * 70, "", " ", "\\x00",
])
FIELD_NAMES = st.sampled_from([*FIELDS, "supersede", "title", "body", "", "agent ", "AGENT"])


@st.composite
def frontmatter(draw: st.DrawFn) -> bytes:
    """An entry whose fields are drawn from valid names and hostile values."""
    lines = ["---"]
    for _ in range(draw(st.integers(0, 10))):
        value = draw(st.one_of(YAML_BITS, st.text(max_size=30)))
        lines.append(f"{draw(FIELD_NAMES)}: {value}")
    lines += ["---", draw(st.sampled_from(["", "# Title", "#NoSpace", "# " + "t" * 160])),
              draw(st.text(max_size=200))]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid entry with a few bytes inserted, deleted or replaced."""
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        chunk = draw(st.binary(min_size=1, max_size=8))
        if op == "insert":
            data[at:at] = chunk
        elif op == "delete":
            del data[at:at + len(chunk)]
        else:
            data[at:at + len(chunk)] = chunk
    return bytes(data)


def entries() -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=400), frontmatter(), mutated())


def test_fuzzed_entries_raise_only_invalid_entry(
        sized: Callable[[str], int], figure: Callable[[str, object], None]) -> None:
    tally = {"examples": 0, "accepted": 0, "refused": 0}
    accepted: list[tuple[str, Entry]] = []

    @settings(max_examples=sized("fuzz_examples"), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=entries(), name=st.sampled_from(["2026-05-01-x.md", "x.md", "2026-13-45-y.md"]))
    def one(data: bytes, name: str) -> None:
        tally["examples"] += 1
        try:
            entry = parse(data, filename=name, folder_agent="api")
        except InvalidEntry as exc:
            assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
            tally["refused"] += 1
        else:
            tally["accepted"] += 1
            if len(accepted) < 2000:
                accepted.append((f"api/journal/{len(accepted)}-{name}", entry))

    one()
    folded = fold(accepted, agents=["api"], date=dt.date(2026, 6, 1),
                  ref_exists=lambda _: True, config=Config())
    memory = render_files(folded, ["api"], Config().budget).files.get("api/MEMORY.md", b"")
    assert not over_budget(memory.decode(), Config().budget)
    figure("fuzzed entries through parse", f"{tally['examples']} examples "
           f"({tally['refused']} refused with InvalidEntry, {tally['accepted']} accepted and "
           "folded), 0 other exceptions")
