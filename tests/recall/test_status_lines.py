"""Recall ranks status lines (`DONE: …`, `TODO: …`, "To do: …") after the facts it found,
unless the question asks for status; a title that merely starts with such a word is a
fact (`recall/query.py`)."""

from __future__ import annotations

import pytest

from journal_mem.recall.query import is_status


@pytest.mark.parametrize(("title", "status"), [
    ("DONE: WASM compilation of the image plugin", True),
    ("TODO: WASM compilation for the search plugin", True),
    ("To do: **Audit trail**: log every plugin install", True),
    ("**DONE:** incremental builds", True),
    ("TODO - migrate the queue", True),
    ("In progress: the theme packaging", True),
    ("Next.js builds need Node 22", False),
    ("Done right, retries are safe", False),
    ("todo-list items live in `notes/`", False),
    ("Compilation via cargo build --target wasm32-wasip2", False),
])
def test_a_status_line_is_told_by_its_word_and_colon(title: str, status: bool) -> None:
    assert is_status(title) is status
