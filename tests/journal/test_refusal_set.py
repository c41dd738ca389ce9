"""False refusals and misses of what every way in refuses, measured on a set written for
it: lines as teams write memory (a variable reference beside the word "password", an
ASCII arrow, an HTML comment shown in a code span, placeholders, hashes) that must be
taken, and secrets in the forms leaks take (a password in a URL, provider tokens, a
private key, credentials on a command line) that must be refused. Each line is judged
as a title is (`entry.check_title`, which every way in applies) and as a body is
(`secrets.scan`)."""

from __future__ import annotations

import pytest

from journal_mem.journal.entry import check_title
from journal_mem.journal.secrets import scan

BENIGN = [
 "The worker reads `password: settings.queue.password` from the vault",
 "Requests flow API --> queue --> worker",
 "graph LR; source --> parse --> render",
 "`<!-- prettier-ignore -->` keeps a table as written",
 "The password reset flow sends one email per hour",
 "Rate limits use a token bucket of 20 per minute",
 "Send the key in the `X-Api-Key` header",
 "Placeholder keys look like sk-XXXXXXXXXXXXXXXX in the docs",
 "Clone with git@github.com:quill/site.git",
 "Local DB: postgresql://localhost:5432/site",
 "Set `api_key: ${API_KEY}` in quill.toml",
 "Write `password: \"<your password>\"` in the example config",
 "CI exports AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY from the secret store",
 "The fix landed in 3f2c9a8e7d6b5c4a3f2e1d0c9b8a7f6e5d4c3b2a",
 "Session ids are UUIDs like 123e4567-e89b-12d3-a456-426614174000",
 "Call the API with `Authorization: Bearer $TOKEN`",
 "The secret key is rotated every 90 days by the platform team",
 "Use `--password-stdin` with docker login, never `--password`",
 "password: os.environ['DB_PASSWORD']",
 "token = config.github.token",
 "The sha256 of the release is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
 "Base64 images over 40 KB are moved to files",
 "Run `htpasswd -c .htpasswd admin` to create the user",
 "The JWT lifetime is 15 minutes; refresh tokens last 30 days",
 "Use ${{ secrets.NPM_TOKEN }} in the publish job",
]
REAL = [
 "Staging DB is postgresql://quill:Xq7-tR9m-2Lp@db.staging:5432/site",
 "Key AKIAIOSFODNN7EXAMPLE was used for the bucket",
 "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
 "Token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
 "Bot token xoxb-2481516-9876543210-AbCdEfGhIjKlMnOpQrStUvWx",
 "Use sk_live_51HqZ9bKx3Qw8Yt2Lm4Np6Rs for payments",
 "-----BEGIN RSA PRIVATE KEY-----",
 "password=Tr0ub4dor&3xq",
 "mysql -u root --password hunter2xyz9",
 "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc'",
 "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
 "Authorization: Basic YWRtaW46c2VjcmV0cGFzcw==",
 "Maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
 "npm token npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
 "export OPENAI_API_KEY=sk-proj-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0Ab",
 "The admin password is Kx9!mQ2#vL7p",
]


def refused(line: str) -> list[str]:
    problems: list[str] = []
    check_title(line, problems)
    return problems + [finding.kind for finding in scan(line)]


def test_the_measured_figures() -> None:
    false = [line for line in BENIGN if refused(line)]
    missed = [line for line in REAL if not refused(line)]
    print(f"\nrefusals: {len(false)} false of {len(BENIGN)} ordinary lines, "
          f"{len(missed)} missed of {len(REAL)} secrets")
    assert (false, missed) == ([], [])


@pytest.mark.parametrize("line", BENIGN)
def test_ordinary_text_is_taken(line: str) -> None:
    assert refused(line) == []


@pytest.mark.parametrize("line", REAL)
def test_a_secret_is_refused(line: str) -> None:
    assert refused(line)
