"""A focused secret detector for `jmem check` (memory files are committed and shared).

Patterns for the credentials that leak most (private key blocks, cloud and
VCS tokens) and `name = value` assignments of high-entropy strings to
secret-sounding names. Each finding names the rule and the line, never the secret.
"""

from __future__ import annotations

import math
import re

RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("OpenAI/Anthropic key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("Stripe key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
)
_ASSIGN = re.compile(
    r"(?i)\b[\w.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\w.-]*"
    r"\s*[:=]\s*[\"']?([A-Za-z0-9+/=_\-.]{20,})"
)


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def find_secrets(text: str) -> list[str]:
    """`line N: rule` for every likely secret in `text`."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        for name, pattern in RULES:
            if pattern.search(line):
                found.append(f"line {number}: {name}")
        for match in _ASSIGN.finditer(line):
            if entropy(match.group(1)) >= 4.0:
                found.append(f"line {number}: high-entropy value assigned to a secret name")
    return found
