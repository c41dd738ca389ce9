"""One test per secret pattern, and the things that must not be flagged."""

from __future__ import annotations

import pytest

from journal_mem.model.secretscan import entropy, scan

# Built from parts so that this file itself does not look like it holds secrets.
CASES = {
    "private_key": "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow...\n",
    "openssh_key": "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n",
    "aws_access_key_id": "key " + "AKIA" + "Z7Q4MEXQWN3KTB5P",
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_oauth": "gho_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_server": "ghs_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD",
    "gitlab_token": "glpat-" + "xY3zA9bC7dE5fG1hJ2kL",
    "slack_token": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUv",
    "google_api_key": "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "stripe_live_key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N",
    "assignment": 'api_key = "' + 'q8Zr3kP0vX7mL2nB9tY4wQ6e"',
    "yaml_assignment": "client_secret: " + "Zx81-Qm2Lp9Rt4Vw7Yk3Bn6",
    "env_assignment": "DB_PASSWORD=" + "f7Gh2Kq9Lm4Np8Rs3Tv6",
}

EXPECTED_KIND = {
    "openssh_key": "private_key",
    "github_oauth": "github_token",
    "github_server": "github_token",
    "github_pat": "github_token",
    "assignment": "high-entropy secret assignment",
    "yaml_assignment": "high-entropy secret assignment",
    "env_assignment": "high-entropy secret assignment",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_pattern_is_found(name: str) -> None:
    text = f"# A lesson\n\nSome context.\n{CASES[name]}\n"
    findings = scan(text)
    assert [f.kind for f in findings] == [EXPECTED_KIND.get(name, name)]
    assert findings[0].line == 4


@pytest.mark.parametrize("text", [
    "Run the API tests with -p no:randomly",
    "password = hunter2",  # short and low-entropy: a word, not a generated secret
    "token: ${GITHUB_TOKEN}",  # a reference, not a value
    "api_key = <your key here>",
    "secret_key = os.environ['SECRET_KEY_VALUE_X']",
    "password: xxxxxxxxxxxxxxxx",
    "token_file = /etc/app/tokens/current.txt",
    "The AKIA prefix marks AWS access key ids",
    "ghp_ tokens are GitHub personal access tokens",
    "a sha: 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
])
def test_ordinary_text_is_not_flagged(text: str) -> None:
    assert scan(text) == []


def test_finding_does_not_repeat_the_secret() -> None:
    finding = scan(CASES["github_token"])[0]
    assert CASES["github_token"] not in finding.describe()
    assert finding.describe() == "line 1: looks like a github token"


def test_entropy() -> None:
    assert entropy("") == 0.0
    assert entropy("aaaa") == 0.0
    assert entropy("ab") == 1.0
