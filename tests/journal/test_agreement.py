"""Agreement is not correction: a close pair is a probable correction only when the newer
lesson changes something (`similar.change`); the same writer's rewording counts; "newer"
is the fold's causal order, not the clock. Figures on labelled sets: bench_outdated."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from journal_mem.journal import similar
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


def _spelled(items: list[Any]) -> list[str]:
    """Every text a parsed pattern without unbounded repeats matches (a digit as "7")."""
    out = [""]
    for op, arg in items:
        name = str(op)
        if name == "AT":
            continue
        if name == "LITERAL":
            options = [chr(arg)]
        elif name == "IN":
            options = ["7"]  # `\\d`, the only class in it
        elif name == "BRANCH":
            options = [t for branch in arg[1] for t in _spelled(branch)]
        elif name == "SUBPATTERN":
            options = _spelled(arg[3])
        elif name == "MAX_REPEAT":
            low, high, inner = arg
            assert high == 1, "an unbounded repeat: the language is not finite"
            options = [""] * (low == 0) + _spelled(inner)
        else:
            raise AssertionError(f"{name} in the change words' pattern")
        out = [a + b for a in out for b in options]
    return out


def test_every_change_phrase_starts_with_a_first_word() -> None:
    """`_may_cue` is exact for ASCII text: every phrase the pattern matches begins with a
    word of `_CUE_FIRST`, in any case, alone or in a sentence (the pattern is bounded by
    `\\b`, so the phrase's first word is a whole word of the text)."""
    import re._parser as sre_parse

    phrases = _spelled(list(sre_parse.parse(similar._CUE_PATTERN)))
    assert len(phrases) > 100 and "has been lowered" in phrases and "since v7" in phrases
    for phrase in phrases:
        for text in (phrase, phrase.upper(), f"The limit, {phrase.title()}: 40."):
            assert similar._cue().search(text) is not None, text
            assert similar._may_cue(text), text


def test_the_change_words_are_not_compiled_for_a_text_without_them() -> None:
    assert not similar._may_cue("Lesson 42 about thing 42")
    assert similar._may_cue("The limit was lowered to 4") and similar._may_cue("Kelvin \u212a")
    code = ("from journal_mem.journal import similar as s; t = 'Lesson 42 about thing 42';"
            " print(s._subject(t) == s.stems(t), s._cue_in(t), len(s._CUES))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "None", "0"]
