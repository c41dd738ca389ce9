"""Secrets in lesson text: a focused set of patterns (docs/DESIGN.md, "Journal entries").

Named `secretscan` so that it does not shadow the standard library's `secrets`.
A maintained detector (detect-secrets 1.5) was measured first: ~95 ms to
import and ~13 ms per 20-line lesson, i.e. seconds for a commit of 1,000
lessons, so the guard uses these patterns instead. Each pattern has a test.
A finding names the line and the kind, never the secret itself.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# One alternation, one pass over the text; the group name is the kind.
_TOKEN_RE = re.compile(
    r"(?P<private_key>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
    r"|(?P<aws_access_key_id>\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b)"
    r"|(?P<github_token>\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b)"
    r"|(?P<gitlab_token>\bglpat-[A-Za-z0-9_-]{20,})"
    r"|(?P<slack_token>\bxox[abposr]-[A-Za-z0-9-]{10,})"
    r"|(?P<google_api_key>\bAIza[0-9A-Za-z_-]{35})"
    r"|(?P<stripe_live_key>\b[sr]k_live_[0-9A-Za-z]{20,})"
    r"|(?P<jwt>\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)

# The literal parts of the patterns above: one cheap search (~1 µs on a lesson,
# against ~25 µs for the full alternation) rules most lessons out.
_TOKEN_HINT_RE = re.compile(
    r"PRIVATE KEY|A(?:KIA|SIA|BIA|CCA|Iza)|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|k_live_|eyJ"
)

# `password = value`, `api_key: "value"`, `"client_secret": "value"`, `TOKEN=value`.
# It starts at the keyword (not at the start of the name): no backtracking over
# every word of the text.
_ASSIGN_RE = re.compile(
    r"(?i)(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|credential)s?[A-Za-z0-9_.-]*[\"']?\s*[:=]\s*[\"']?"
    r"(?P<value>[^\s\"',;`)]{12,})"
)
_PLACEHOLDER_RE = re.compile(r"(?i)^(?:\$\{?|<|%|\{\{)|x{4,}|\*{3,}|example|changeme|redacted")
MIN_ENTROPY = 3.5  # bits per character; random base64/hex keys of 16+ chars exceed it


@dataclass(frozen=True)
class Finding:
    """One suspected secret: 1-based line number and what it looks like."""

    line: int
    kind: str

    def describe(self) -> str:
        return f"line {self.line}: looks like a {self.kind.replace('_', ' ')}"


def entropy(text: str) -> float:
    """Shannon entropy of `text` in bits per character."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _secret_value(value: str) -> bool:
    """A value that looks generated (high entropy), not a word, path or placeholder."""
    if _PLACEHOLDER_RE.search(value) or "/" in value or "(" in value:
        return False
    return len(value) >= 12 and entropy(value) >= MIN_ENTROPY


def scan(text: str) -> list[Finding]:
    """Every suspected secret in `text`, in order, one finding per line and kind."""
    found: set[Finding] = set()
    tokens = _TOKEN_RE.finditer(text) if _TOKEN_HINT_RE.search(text) else ()
    for match in tokens:
        kind = match.lastgroup or "secret"
        found.add(Finding(_line_of(text, match.start()), kind))
    for match in _ASSIGN_RE.finditer(text):
        if _secret_value(match.group("value")):
            found.add(Finding(_line_of(text, match.start()), "high-entropy secret assignment"))
    return sorted(found, key=lambda f: (f.line, f.kind))
