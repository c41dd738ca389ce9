"""`validate` / `parse_valid`: one verdict under one policy, secrets included."""

from __future__ import annotations

import pytest

from journal_mem.errors import InvalidEntry
from journal_mem.journal.entry import build, render
from journal_mem.journal.validate import Policy, check_built, parse_valid, validate

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_secret_is_a_problem_only_when_the_policy_scans_for_secrets() -> None:
    entry = build(agent="api", topic="t", title="Use the token", body=f"token {TOKEN}")
    assert validate(entry, Policy(scan_secrets=False)) == []
    assert validate(entry, Policy()) == ["secret: line 14: looks like a github token"]
    with pytest.raises(InvalidEntry):
        check_built(entry, Policy())
    assert check_built(entry, Policy(scan_secrets=False)) is entry


def test_a_secret_in_a_yaml_comment_is_found_in_the_file_text() -> None:
    entry = build(agent="api", topic="t", title="Clean")
    data = render(entry).replace("topic: t", f"topic: t  # {TOKEN}").encode()
    with pytest.raises(InvalidEntry) as info:
        parse_valid(data, Policy())
    assert any("github token" in p for p in info.value.problems)


def test_an_invalid_entry_reports_its_secrets_too() -> None:
    data = f"---\nagent: api\nnope: 1\n---\n\n# T\n\n{TOKEN}\n".encode()
    with pytest.raises(InvalidEntry) as info:
        parse_valid(data, Policy(), filename="2026-01-01-x.md")
    assert any("unknown field" in p for p in info.value.problems)
    assert any(p.startswith("secret: ") for p in info.value.problems)


def test_imported_drafts_are_judged_like_written_lessons() -> None:
    import datetime as dt

    from journal_mem.journal.drafts import Draft, to_entry

    draft = Draft(agent="api", topic="ci", title="The CI token", body=f"It is {TOKEN}.")
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    with pytest.raises(InvalidEntry) as info:
        to_entry(draft, now, Policy())
    assert any("github token" in p for p in info.value.problems)
    assert to_entry(draft, now, Policy(scan_secrets=False)).body == f"It is {TOKEN}."
