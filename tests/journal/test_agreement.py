"""Agreement is not correction: a close pair is a probable correction only when the newer
lesson changes something (`similar.change`); the same writer's rewording counts; "newer"
is the fold's causal order, not the clock. Figures on labelled sets: bench_outdated."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from journal_mem.journal.similar import change, conflicts, held_corrections

OLD = SimpleNamespace(title="Vents open when the air reaches 28 °C", topic="rules",
                      body="The climate rule opens roof vents in 10% steps above 28 °C.")


def lesson(title: str, body: str = "") -> SimpleNamespace:
    return SimpleNamespace(title=title, body=body, topic="rules")


@pytest.mark.parametrize(("title", "body", "why"), [
    ("Vents open at 26 °C", "Lowered after leaf scorch.", "a number"),
    ("Vents are driven by the Priva controller above 28 °C", "", "a name"),
    ("Vents no longer open by themselves at 28 °C", "", "a negation"),
    ("Vents open at 28 °C, the rule was changed to steps of 20%", "", "a number"),
    ("Roof vents open at 28 °C instead of the fans", "", "says 'instead'"),
])
def test_a_change_is_named(title: str, body: str, why: str) -> None:
    found = change(lesson(title, body), OLD)
    assert found is not None and found.startswith(why), found


@pytest.mark.parametrize("title", [
    "Roof vents open once the house passes 28 °C",
    "At 28 °C the climate rule starts opening the vents",
    "Vents step open in 10% increments above 28 °C",
])
def test_a_restatement_with_the_same_numbers_is_an_agreement(title: str) -> None:
    assert change(lesson(title), OLD) is None


def test_an_opposite_word_is_a_change() -> None:
    old = SimpleNamespace(title="Acknowledge the message before processing it", body="",
                          topic="queue")
    new = SimpleNamespace(title="Acknowledge the message after processing it", body="",
                          topic="queue")
    assert change(new, old) == "an opposite: before / after"


def _fact(key: str, title: str, minutes: int, agent: str = "api") -> SimpleNamespace:
    return SimpleNamespace(key=key, title=title, body="", topic="cache", holders=(agent,),
                           created=dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
                           + dt.timedelta(minutes=minutes), path=f"{agent}/journal/{key}.md")


def test_the_same_writer_rewording_its_own_fact_is_a_conflict() -> None:
    old = _fact("port-old", "The cache listens on port 6380", 0)
    new = _fact("port-new", "The cache listens on port 6390", 5)  # same writer, no key
    assert conflicts([old, new], dt.date(2026, 11, 2)) == [("port-old", "port-new")]


def test_newer_is_the_causal_order_not_the_clock() -> None:
    old = _fact("port-old", "The cache listens on port 6380", 5)
    new = _fact("port-new", "The cache listens on port 6390", 0)  # its clock is behind
    day = dt.date(2026, 11, 2)
    assert conflicts([old, new], day) == [("port-new", "port-old")]
    assert conflicts([old, new], day, {"port-old": 0, "port-new": 1}) == [("port-old",
                                                                            "port-new")]


def test_held_corrections_read_a_body_only_for_a_close_pair() -> None:
    asked: list[str] = []

    def body(key: str) -> str:
        asked.append(key)
        return "Redis for sessions on the cache host."

    new = SimpleNamespace(title="The cache moved to port 6390", body="", topic="cache")
    held = [("port", "The cache listens on port 6380", "cache"),
            ("deploy", "Deploys go out on Tuesdays", "deploy")]
    assert held_corrections([("new", new)], held, body) == {"port": "new"}
    assert asked == ["port"]
