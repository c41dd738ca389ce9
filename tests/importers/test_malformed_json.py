"""Imports of JSON that is valid but not what an export holds (a number where a list
belongs, nesting deeper than the parser goes): each record listed as invalid, the
good ones imported, the exit code 1 ("invalid input"), never a crash (3)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import jmem, journal_files

GOOD = {"holders": ["main"], "created": "2026-01-01T00:00:00+00:00",
        "title": "Staging deploys need the VPN", "key": "staging-vpn", "topic": "ops"}


def snapshot(facts: list[object]) -> str:
    return json.dumps({"format": "journal-mem-snapshot", "schema": 1, "facts": facts})


def test_a_number_where_a_list_belongs_is_an_invalid_record(repo: Path) -> None:
    path = repo / "snap.json"
    path.write_text(snapshot([{**GOOD, "key": "bad-refs", "title": "Bad refs", "refs": 5},
                              {**GOOD, "key": "bad-tags", "title": "Bad tags",
                               "tags": [[["deep"]]]}, GOOD]))
    proc = jmem(repo, "import", "snapshot", str(path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "fact 1: refs: must be a list of strings" in proc.stdout + proc.stderr
    assert "fact 2: tags: must be a list of strings" in proc.stdout + proc.stderr
    assert len(journal_files(repo, "main")) == 1  # the good fact is in


def test_json_nested_deeper_than_the_parser_goes_is_invalid_not_a_crash(repo: Path) -> None:
    deep = repo / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for kind in ("snapshot", "mem0"):
        proc = jmem(repo, "import", kind, str(deep))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "nested too deeply" in proc.stdout + proc.stderr
    nested = repo / "m.json"
    nested.write_text(json.dumps([{"memory": "Tags that are lists are no tags",
                                   "metadata": {"tags": [[["x"]]]}},
                                  {"memory": "Cache keys carry the schema version"}]))
    proc = jmem(repo, "import", "mem0", str(nested))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "record 1: tags: must be a list of words" in proc.stdout + proc.stderr
    assert len(journal_files(repo, "main")) == 1
