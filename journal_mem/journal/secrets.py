"""Secrets in lesson text: a focused set of patterns, one pass, standard library only
(docs/DESIGN.md, "Journal entries").

Named `secretscan` so that it does not shadow the standard library's `secrets`.
A maintained detector was measured first (detect-secrets 1.5.0, its
`core.scan.scan_line` under `default_settings()`): 140-180 ms to import,
~20 ms to load its plugins and ~0.9 ms per line, so ~18 ms for a 20-line
lesson and seconds for a commit of 1,000 lessons; its vendor plugins do not
know Anthropic, OpenAI, npm or PyPI tokens (only its entropy plugins flag
them, and those flag ordinary hashes and paths too). So the guard, `write`,
`check` and the distiller use these patterns: the vendor prefixes are exact,
and the entropy rules only look at assigned values, URL passwords and
40-character AWS-style secrets. Each pattern has a test, and so has the
ordinary text that must pass. A finding names the line and the kind, never
the secret itself.
"""

from __future__ import annotations

import binascii
import functools
import math
import re
from collections.abc import Iterator

from journal_mem.tuples import NamedTuple

# The patterns a lesson reaches only past a cheaper test (a word, a hint, a long run) are
# compiled on first use (`functools.cache`): compiling all of them took ~4.5 ms of every
# process that scans (a `write`, a distill that parses a new lesson), and an ordinary
# lesson reaches none of them.

@functools.cache
def _token_re() -> re.Pattern[str]:
    """One alternation, one pass over the text; the group name is the kind."""
    return re.compile(
        r"(?P<private_key>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
        r"|(?P<aws_access_key_id>\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b)"
        r"|(?P<github_token>\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b)"
        r"|(?P<gitlab_token>\bglpat-[A-Za-z0-9_-]{20,})"
        r"|(?P<slack_token>\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"
        r"|hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]{16,})"
        r"|(?P<google_api_key>\bAIza[0-9A-Za-z_-]{35})"
        r"|(?P<google_oauth_secret>\bGOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[A-Za-z0-9_-]{20,})"
        r"|(?P<stripe_key>\b(?:[sr]k|pk)_live_[0-9A-Za-z]{20,}|\b[sr]k_test_[0-9A-Za-z]{20,}"
        r"|\bwhsec_[0-9A-Za-z]{20,})"
        r"|(?P<anthropic_key>\bsk-ant-[A-Za-z0-9_-]{20,})"
        r"|(?P<openai_key>\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,})"
        r"|(?P<npm_token>\bnpm_[A-Za-z0-9]{36}\b)"
        r"|(?P<pypi_token>\bpypi-AgE[A-Za-z0-9_-]{32,})"
        r"|(?P<jwt>\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
        r"|(?P<hugging_face_token>\bhf_[A-Za-z0-9]{30,}\b)"
        r"|(?P<sendgrid_key>\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,})"
        r"|(?P<azure_storage_key>\b(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,}={0,2})"
    )


# The literal parts of the patterns above: one cheap search (~1 µs on a lesson,
# against ~25 µs for the full alternation) rules most lessons out.
_TOKEN_HINT_RE = re.compile(
    r"PRIVATE KEY|A(?:KIA|SIA|BIA|CCA|Iza)|gh[pousr]_|github_pat_|glpat-|xox[abposre]-|xapp-"
    r"|hooks\.slack|GOCSPX-|ya29\.|k_live_|k_test_|whsec_|sk-|npm_|pypi-|eyJ|hf_|SG\."
    r"|AccountKey=|SharedAccessKey="
)

# `password = value`, `api_key: "value"`, `"client_secret": "value"`, `TOKEN=value`.
# It starts at the keyword (not at the start of the name): no backtracking over
# every word of the text.
@functools.cache
def _assign_re() -> re.Pattern[str]:
    return re.compile(
        r"(?i)(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
        r"|private[_-]?key|credential)s?[A-Za-z0-9_.-]*[\"']?\s*[:=]\s*[\"']?"
        r"(?P<value>[^\s\"',;`)]{12,})"
    )


# Where `_assign_re` can start, in lower-case text (overlapping: "secretoken"), and the
# letters that ignoring case matches to ASCII ones they do not lower-case to.
_ASSIGN_KEYWORDS = ("passw", "pwd", "secret", "token", "api", "access", "private", "credential")
_FOLDED = ("\u0130", "\u0131", "\u017f", "\u212a")


@functools.cache
def _password_re() -> re.Pattern[str]:
    """A password said in any way a lesson says it: `password: hunter2!`,
    `PGPASSWORD=a;b,c`, "the staging password is hunter2!", "the password for prod is `x`",
    "… was changed to …". Unlike the generic assignment above, the value may hold `;` and
    `,` and sit in a code span, and it needs no entropy: a password is short and human."""
    return re.compile(
        r"(?i)(?:passw(?:or)?d|passphrase|pwd)[A-Za-z0-9_-]*[\"']?"
        r"(?:\s*[:=]\s*|\s+(?:(?:was|is|has\s+been)\s+)?(?:set|changed|reset)\s+to\s+"
        r"|\s+(?:(?:for|of|on|in)\s+[\w .-]{1,30}?\s+)?(?:is|was)(?:\s+now)?\s+"
        r"|(?<=--password)\s+|(?<=--passwd)\s+|(?<=--pwd)\s+)"  # a command's flag
        r"[`\"']?(?P<value>[^\s`\"']+)"
    )


@functools.cache
def _bearer_re() -> re.Pattern[str]:
    """`Authorization: Bearer <token>` (any case): the token, when it looks generated."""
    return re.compile(r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)")


@functools.cache
def _basic_re() -> re.Pattern[str]:
    """`Authorization: Basic <base64 of user:password>`: the value decodes to `user:secret`."""
    return re.compile(r"(?i)\bbasic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")


@functools.cache
def _command_password_re() -> re.Pattern[str]:
    """A password given to a command on its command line: `curl -u user:pw` (`--user`),
    `mysql -pPW` (attached: `-p PW` would prompt), `docker login -p PW` (any `login`),
    `sshpass -p PW`, `redis-cli -a PW` (`--pass`), `--password PW` is `_password_re`'s."""
    return re.compile(
        r"(?:\bcurl\b[^\n]*?\s(?:-u\s*|--user[=\s]+)[\"']?[^\s:\"']+:"
        r"|\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p"
        r"|\blogin\b[^\n]*?\s-p\s+"
        r"|\bsshpass\b[^\n]*?\s-p\s*"
        r"|\bredis-cli\b[^\n]*?\s(?:-a|--pass)\s+)"
        r"[\"']?(?P<value>[^\s\"']+)"
    )


_COMMAND_WORDS = ("curl", "mysql", "mariadb", "login", "sshpass", "redis-cli")
_PROSE_WORDS = ("key", "token", "secret", "credential")


@functools.cache
def _prose_key_re() -> re.Pattern[str]:
    """A key said in prose: "the API key for staging is 9f8a…", "the token was …": the value
    when it looks generated (a word, a path or a placeholder is not one)."""
    return re.compile(
        r"(?i)\b(?:api[ _-]?key|access[ _-]?key|secret(?:[ _-]?key)?|token|credential)s?"
        r"\s+(?:(?:for|of|on|in|to)\s+[\w .-]{1,30}?\s+)?(?:is|was)(?:\s+now)?\s+"
        r"[`\"']?(?P<value>[^\s`\"']+)"
    )


@functools.cache
def _userinfo_re() -> re.Pattern[str]:
    """`scheme://user:password@host`: the password is what leaks."""
    return re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@]+:(?P<value>[^\s/@]+)@[^\s/@]")


@functools.cache
def _aws_secret_re() -> re.Pattern[str]:
    """An AWS secret access key: 40 base64 characters, about half of them hold a `/`."""
    return re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


@functools.cache
def _placeholder_re() -> re.Pattern[str]:
    return re.compile(
        r"(?i)^(?:\$\{?|<|%|\{\{|\[)|x{4,}|\*{3,}|example|changeme|redacted|your[_-]?"
    )


_PLACEHOLDER_WORDS = frozenset({"pass", "password", "passwd", "pwd", "secret", "pw", "p",
                                "token", "user", "username", "mypassword", "hunter2"})
# Code that reads a value (`context.Request.Headers[`, `config.Api.Key`): a dotted path of
# words, digits only at a word's end, optionally opening a subscript or a call.
@functools.cache
def _code_re() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z_$][A-Za-z_$]*\d*(?:\.[A-Za-z_$][A-Za-z_$]*\d*)+[\[(]?")


# A path segment: a lower-case word, a capitalised word, or a `${VAR}`.
@functools.cache
def _path_segment_re() -> re.Pattern[str]:
    return re.compile(r"[a-z0-9._~-]*|[A-Z][a-z0-9._-]*|\$\{?\w+\}?")


MIN_ENTROPY = 3.5  # bits per character; random base64/hex keys of 16+ chars exceed it
AWS_MIN_ENTROPY = 4.0  # 40 random base64 characters score ~5


class Finding(NamedTuple):
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


def _looks_like_path(value: str) -> bool:
    """`/etc/app/tokens.txt`, `config/Secrets/prod.yaml`: words between slashes."""
    if "/" not in value:
        return False
    if value.startswith(("/", "./", "../", "~/")) or "://" in value:
        return True
    return all(_path_segment_re().fullmatch(seg) for seg in value.split("/"))


def _secret_value(value: str) -> bool:
    """A value that looks generated (high entropy), not a word, path, placeholder or code
    reading the value from somewhere (`apiKey = context.Request.Headers["X-API-Key"]`)."""
    if (_placeholder_re().search(value) or _looks_like_path(value) or "(" in value
            or _code_re().fullmatch(value)):
        return False
    return len(value) >= 12 and entropy(value) >= MIN_ENTROPY


def _url_password(value: str) -> bool:
    """Any URL password but a placeholder (`${PGPASSWORD}`, `<pw>`, `***`, "password")."""
    return not (_placeholder_re().search(value) or value.lower() in _PLACEHOLDER_WORDS)


def _password(value: str) -> bool:
    """A value said to be a password that is one: 6+ characters, not a plain word, a
    number of characters, a reference (`$X`, `<pw>`, `os.environ[…]`) or a path."""
    value = value.rstrip(".,;:)")
    if len(value) < 6 or value.lower() in _PLACEHOLDER_WORDS or _placeholder_re().search(value):
        return False
    if _looks_like_path(value) or any(c in value for c in "([{") or _reference(value):
        return False
    return not value.isalpha() and not value.isdigit()


def _reference(value: str) -> bool:
    """Code naming where a password is read from (`config.database.password`,
    `settings.db.pwd`): a dotted path of two dots or more, or one ending in the word."""
    if not _code_re().fullmatch(value):
        return False
    last = value.rsplit(".", 1)[-1].lower()
    return value.count(".") >= 2 or last in _PLACEHOLDER_WORDS


def _folded(text: str, lower: str) -> bool:
    """Whether lower case moves offsets in `text` or it holds a letter that ignoring case
    matches beyond its lower case (`ſ` is an `s` to it): then `lower` cannot tell where
    a case-blind pattern may match."""
    # every `_FOLDED` letter is beyond ASCII, and ASCII keeps its length in lower case
    return not text.isascii() and (len(lower) != len(text) or any(c in text for c in _FOLDED))


def _keyword_starts(lower: str) -> list[int]:
    """Every offset of `lower` where one of `_ASSIGN_KEYWORDS` starts, in order (`str.find`:
    four times faster than a regex of lookaheads tried at every offset)."""
    found: set[int] = set()
    for word in _ASSIGN_KEYWORDS:
        at = lower.find(word)
        while at >= 0:
            found.add(at)
            at = lower.find(word, at + 1)
    return sorted(found)


# Two patterns need a word (case-blind) or a long run of one class: a lesson without it
# is not searched (~20 us of a ~90 us scan of a lesson).
def _may_say_password(text: str, lower: str) -> bool:
    """False only where `_password_re` cannot match: it starts with `pass…` or `pwd`."""
    return "pass" in lower or "pwd" in lower or _folded(text, lower)


def _may_hold_aws_key(text: str) -> bool:
    """False only where `_aws_secret_re` cannot match: no run of 40 of its characters.
    Found on the text's bytes, each of those characters made `a` and any other a space (a
    word of 40 characters was not enough: in an entry's file, keys and paths are such
    words, joined by `-`; the pattern then ran on four lessons in five)."""
    return _AWS_RUN in text.encode("utf-8", "surrogatepass").translate(_AWS_CHARS)


_AWS_RUN = b"a" * 40
_AWS_CHARS = bytes(0x61 if chr(i) in "/+" or (chr(i).isascii() and chr(i).isalnum()) else 0x20
                   for i in range(256))


def _assignments(text: str, lower: str) -> Iterator[re.Match[str]]:
    """`_assign_re().finditer(text)`, tried only where one of its keywords starts (found in
    `lower`, the text in lower case): ~4 times faster on a lesson. The whole search runs
    when `lower` cannot tell (`_folded`)."""
    if _folded(text, lower):
        yield from _assign_re().finditer(text)
        return
    end = 0
    for at in _keyword_starts(lower):
        if at < end:
            continue  # inside the last match: finditer goes on after it
        match = _assign_re().match(text, at)
        if match is not None:
            end = match.end()
            yield match


def _lines_with(text: str, lower: str, words: tuple[str, ...],
                also: tuple[str, ...]) -> list[tuple[int, str]]:
    """(1-based number, line) of the lines holding one of `words` and one of `also` (any
    case): the patterns that start with a word run on those lines only, not at every
    offset of the text (most prose says "token" or "login" without a value)."""
    if not any(word in lower for word in words) or not any(a in lower for a in also):
        return []
    return [(n, line) for n, (line, low) in enumerate(
        zip(text.split("\n"), lower.split("\n"), strict=True), 1)
        if any(word in low for word in words) and any(a in low for a in also)]


def _basic_credentials(value: str) -> bool:
    """Base64 of `user:password` with a password that is one (`Basic dXNlcjpwYXNz` of
    `user:pass` is an example, not a secret)."""
    try:
        # `base64.b64decode(..., validate=True)` is this call; `base64` costs a start ~0.3 ms
        decoded = binascii.a2b_base64(value + "=" * (-len(value) % 4), strict_mode=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and decoded.isprintable()) and _url_password(password) \
        and len(password) >= 4


def _aws_secret(value: str) -> bool:
    """Mixed case and digits, high entropy: not a SHA (hex) nor a path of words."""
    classes = (any(c.isupper() for c in value) and any(c.islower() for c in value)
               and any(c.isdigit() for c in value))
    return classes and not _looks_like_path(value) and entropy(value) >= AWS_MIN_ENTROPY


def scan(text: str) -> list[Finding]:
    """Every suspected secret in `text`, in order, one finding per line and kind."""
    found: set[Finding] = set()
    tokens = _token_re().finditer(text) if _TOKEN_HINT_RE.search(text) else ()
    for match in tokens:
        kind = match.lastgroup or "secret"
        found.add(Finding(_line_of(text, match.start()), kind))
    lower = text.lower()
    for match in _assignments(text, lower):
        if _secret_value(match.group("value")):
            found.add(Finding(_line_of(text, match.start()), "high-entropy secret assignment"))
    for match in _password_re().finditer(text) if _may_say_password(text, lower) else ():
        if _password(match.group("value")):
            found.add(Finding(_line_of(text, match.start()), "password"))
    if "bearer" in lower:
        for match in _bearer_re().finditer(text):
            if _secret_value(match.group("value")):
                found.add(Finding(_line_of(text, match.start()), "bearer token"))
    if "basic" in lower:
        for match in _basic_re().finditer(text):
            if _basic_credentials(match.group("value")):
                found.add(Finding(_line_of(text, match.start()), "basic auth credentials"))
    for number, line in _lines_with(text, lower, _COMMAND_WORDS, (" -",)):
        for match in _command_password_re().finditer(line):
            if _password(match.group("value")) or _secret_value(match.group("value")):
                found.add(Finding(number, "password on a command line"))
    for number, line in _lines_with(text, lower, _PROSE_WORDS, (" is ", " was ")):
        for match in _prose_key_re().finditer(line):
            if _secret_value(match.group("value").rstrip(".,;:)")):
                found.add(Finding(number, "secret in prose"))
    if "://" in text:
        for match in _userinfo_re().finditer(text):
            if _url_password(match.group("value")):
                found.add(Finding(_line_of(text, match.start()), "password in a URL"))
    for match in _aws_secret_re().finditer(text) if _may_hold_aws_key(text) else ():
        if _aws_secret(match.group()):
            found.add(Finding(_line_of(text, match.start()), "aws secret access key"))
    return sorted(found, key=lambda f: (f.line, f.kind))
