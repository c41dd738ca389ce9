"""One test per secret pattern, and the things that must not be flagged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import git, jmem
from hypothesis import example, given, settings
from hypothesis import strategies as st

from journal_mem.journal import secrets as secrets_module
from journal_mem.journal.secrets import entropy, scan

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYz8Q8ZR3KEY"
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
    "stripe_key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "stripe_test_key": "rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "stripe_webhook": "whsec_" + "4eC39HqLyjWDarjtT1zdp7dcQ",
    "aws_secret_access_key": "aws_secret_access_key = " + AWS_SECRET,
    "aws_secret_bare": f"the prod secret is {AWS_SECRET} today",
    "postgres_url": "connect with postgres://admin:" + "S3cr3tPassw0rd" + "@db.internal:5432/app",
    "redis_url": "REDIS_URL=redis://default:" + "hunter22" + "@cache:6379",
    "anthropic_key": "sk-ant-" + "api03-Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8Kl2Mn6Pq9-AbCdEfAA",
    "openai_key": "sk-proj-" + "Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8Kl2Mn6Pq9Rs3Tv6",
    "openai_legacy": "sk-" + "Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8Kl2Mn6Pq9Rs3T",
    "google_oauth_secret": "GOCSPX-" + "Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0F",
    "slack_webhook": ("https://hooks.slack.com/services/"
                      "T0123ABCD/B0123ABCD/" + "Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7"),
    "npm_token": "npm_" + "Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8Kl2",
    "pypi_token": "pypi-" + "AgEIcHlwaS5vcmcCJDk5ZTc4Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8",
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N",
    "assignment": 'api_key = "' + 'q8Zr3kP0vX7mL2nB9tY4wQ6e"',
    "yaml_assignment": "client_secret: " + "Zx81-Qm2Lp9Rt4Vw7Yk3Bn6",
    "env_assignment": "DB_PASSWORD=" + "f7Gh2Kq9Lm4Np8Rs3Tv6",
    "password_in_code_span": "DB password: `" + "Xk9;pq,Lm2`",
    "password_with_separators": "PGPASSWORD=" + "Xy7;kq,Lm9pQ2",
    "password_in_prose": "the staging password is " + "hunter2!",
    "password_changed_to": "the admin password was changed to " + "Spring2026!",
    "password_for_a_place": "The password for prod is `" + "Tr0ub4dor&3`.",
    "password_flag": "mysql --password " + "Xk9pQ2mLzR -h db",
    "bearer_token": "curl -H 'Authorization: Bearer " + "9f8e7d6c5b4aXyZ1q2w3e4r5t6y7u8'",
    "hugging_face_token": "HF_TOKEN is " + "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "sendgrid_key": ("SG." + "abcdefghijKLMNOPqrstuv" + "."
                     + "ABCDEFGHIJklmnopqrstuvwxyz0123456789abc"),
    "azure_storage_key": ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                          + "Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8Kl2Mn6Pq9Rs3Tv6Wy1Za4Bc7De0Fg5=="
                          + ";EndpointSuffix=core.windows.net"),
    # the shell-flag and prose forms (values made up for these tests)
    "curl_user": "curl -u deploy:Tr0ub4dor3x https://api.internal.example/v1/health",
    "curl_user_long": "curl --user admin:S3cretPass! https://ci.internal/api",
    "mysql_attached": "mysql -h db -u root -pHunter2Xq9 app_test",
    "docker_login": "docker login -u ci -p Zq8kL2mPx9vR registry.internal",
    "sshpass": "sshpass -p 'Wr9kLm2qT' ssh deploy@build-7",
    "redis_cli": "redis-cli -h cache-1 -a Rk29xLq8Zp ping",
    "basic_auth": "Authorization: Basic ZGVwbG95OlRyMHViNGRvcjN4",
    "bearer_lower_case": "authorization: bearer 8f14e45fceea167a5a36dedd4bea2543",
    "api_key_in_prose": "the API key for staging is 9f86d081884c7d659a2feaa0c55ad015",
    "token_in_prose": "The staging token is a8F3kq9Zm29Lq8xW",
}

EXPECTED_KIND = {
    "openssh_key": "private_key",
    "github_oauth": "github_token",
    "github_server": "github_token",
    "github_pat": "github_token",
    "assignment": "high-entropy secret assignment",
    "yaml_assignment": "high-entropy secret assignment",
    "env_assignment": "high-entropy secret assignment",
    "stripe_test_key": "stripe_key",
    "stripe_webhook": "stripe_key",
    "aws_secret_access_key": "aws secret access key",
    "aws_secret_bare": "aws secret access key",
    "postgres_url": "password in a URL",
    "redis_url": "password in a URL",
    "openai_legacy": "openai_key",
    "slack_webhook": "slack_token",
    "password_in_code_span": "password",
    "password_with_separators": "password",
    "password_in_prose": "password",
    "password_changed_to": "password",
    "password_for_a_place": "password",
    "password_flag": "password",
    "bearer_token": "bearer token",
    "curl_user": "password on a command line",
    "curl_user_long": "password on a command line",
    "mysql_attached": "password on a command line",
    "docker_login": "password on a command line",
    "sshpass": "password on a command line",
    "redis_cli": "password on a command line",
    "basic_auth": "basic auth credentials",
    "bearer_lower_case": "bearer token",
    "api_key_in_prose": "secret in prose",
    "token_in_prose": "secret in prose",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_pattern_is_found(name: str) -> None:
    text = f"# A lesson\n\nSome context.\n{CASES[name]}\n"
    findings = scan(text)
    assert EXPECTED_KIND.get(name, name) in [f.kind for f in findings]
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
    "use postgres://user:pass@host/db as the form of the URL",
    "DATABASE_URL=postgres://app:${PGPASSWORD}@db:5432/app",
    "mysql://root:<password>@localhost/test",
    "see https://github.com/org/repo/blob/main/src/Module/file.py",
    "the path journal_mem/Commands/distill/report/Renderer/x.py",
    "secret_file = config/Secrets/prod-keys.yaml",
    "sk-learn is not a package name; scikit-learn is",
    "npm_config_registry is read from the environment",
    "base64 of the empty tree: " + "K7MDENGbPxRfiCYz" + "/" + "etc/passwd",
    "Names like sk-ant-xxx or sk-proj-... are placeholders",
    "the password is stored in Vault",
    "passwords are rotated every 90 days",
    "the password is in 1Password",
    "password: ${DB_PASSWORD}",
    "password = os.environ['DB_PASSWORD']",
    "the password is 12 characters long",
    "the password was reset to default",
    "the password is changeme",
    "run pwd to see where you are",
    "password_min_length = 16",
    "Use a Bearer token in the Authorization header",
    "Authorization: Bearer ${TOKEN}",
    "call hf_hub_download for the weights",
    'apiKey = context.Request.Headers["X-API-Key"]',  # code reading a header, not a secret
    'var apiKey = context.Request.Headers["X-API-Key"];',
    "api_key = config.ApiSettings.Key;",
    "token = self.settings.get_token()",
    "git push -u origin main",
    "mysql -u root -p app_test (it asks for the password)",
    "docker login -u ci registry.internal",
    "docker run -u 1000:1000 builder",
    "curl -u user:pass https://example.com",
    "Basic usage: run jmem init first",
    "Authorization: Basic dXNlcjpwYXNz",  # user:pass, the documentation's example
    "the token is valid for 24 hours",
    "the API key is stored in Vault",
    "redis-cli -a $REDIS_PASSWORD ping",
    'sshpass -p "$PASS" ssh host',
    "docker login -p $TOKEN ghcr.io",
    "mysql -p$MYSQL_PWD app",
    "ssh -p 2222 build-7",
    "the secret is to run it twice",
    "login with -p 8080 as the port",
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


@pytest.mark.parametrize("name", ["password_in_code_span", "password_in_prose",
                                  "bearer_token", "hugging_face_token", "sendgrid_key",
                                  "azure_storage_key"])
def test_check_fails_on_a_lesson_committed_past_the_guard(repo: Path, name: str) -> None:
    """Committed with `--no-verify` (no guard): `check`, the CI backstop, still says no."""
    entry = repo / ".claude" / "agent-memory" / "api" / "journal" / "2026-03-01-staging.md"
    entry.write_text(f"# Staging access\n\n{CASES[name]}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "lesson")
    proc = jmem(repo, "check")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "looks like a" in proc.stdout + proc.stderr
    assert CASES[name].split()[-1] not in proc.stdout + proc.stderr  # never the secret


@pytest.mark.parametrize("text", [
    'api_key = "Zx8Kq2mP9vLr4TnW"',
    "secret: a8F3kq.Zm29Lq8x",  # a dot does not make a generated value code
    "apiKey = Zx8Kq2mP9vLr4TnWq1[",
])
def test_values_that_only_look_like_code_are_still_secrets(text: str) -> None:
    assert [f.kind for f in scan(text)] == ["high-entropy secret assignment"]


SHELL_AND_PROSE = ["curl_user", "curl_user_long", "mysql_attached", "docker_login", "sshpass",
                   "redis_cli", "basic_auth", "bearer_lower_case", "api_key_in_prose",
                   "token_in_prose"]


@pytest.mark.parametrize("name", SHELL_AND_PROSE)
def test_the_shell_flag_and_prose_forms_are_refused_on_every_way_in(
        repo: Path, name: str) -> None:
    """`jmem write`, the capture of a native memory file (which the MCP tool and every
    other way share: one intake), and `check` on a lesson committed past the guard."""
    secret = CASES[name]
    written = jmem(repo, "write", "--agent", "api", "--topic", "ops", "--title",
                   "Staging access", "--body", secret)
    assert written.returncode == 1 and "secret" in written.stderr, written.stderr
    native = repo / ".claude" / "agent-memory" / "api" / "staging-access.md"
    native.write_text(f"---\nname: staging access\ndescription: how to reach it\n---\n{secret}\n")
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(repo),
               "tool_name": "Write", "tool_input": {"file_path": str(native), "content": "x"}}
    told = jmem(repo, "wake", "--hook", "claude", stdin=json.dumps(payload))
    assert told.returncode == 0 and "was not filed" in told.stdout, told.stdout
    assert native.is_file()  # refused, never removed
    native.unlink()
    entry = repo / ".claude" / "agent-memory" / "api" / "journal" / "2026-03-01-access.md"
    entry.write_text(f"# Staging access\n\n{secret}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "lesson")
    checked = jmem(repo, "check")
    assert checked.returncode == 1 and "looks like a" in checked.stdout, checked.stdout
    said = checked.stdout + checked.stderr + written.stderr + told.stdout
    for word in re.findall(r"[A-Za-z0-9!:+/=-]{8,}", secret):
        if any(c.isdigit() for c in word):
            assert word not in said  # never the secret itself


# --- the cheap gates before the costly searches are exact ---------------------------

# Words the gated patterns start with, in any case, with the letters ignoring case
# matches beyond lower case (ſ, K, İ, ı), runs of key characters and separators.
_PIECES = st.sampled_from(["pass", "PASSW", "word", "pwd", "Pwd", "phrase", "ſ", "K", "İ",
                           "ı", "secret", "TOKEN", "api", "Access", "private", "credential",
                           "--password", " is ", " = ", ": ", "\n", " ", "/", "+",
                           "A1b2C3d4E5", "wJalrXUtnFEMI/K7MDENG/", "x" * 13, "é", "-",
                           "=", "\ud800", "_key-"])
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)
_KEYWORD_RE = re.compile(r"(?=passw|pwd|secret|token|api|access|private|credential)")


@settings(max_examples=1500, deadline=None)
@given(_TEXTS)
@example("paſsword: hunter2!!")
@example("the PASSPHRASE: A1b2C3d4E5")
@example("x" * 20 + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYz8Q8ZR3KEY")
def test_the_gates_never_skip_a_text_a_pattern_matches(text: str) -> None:
    lower = text.lower()
    starts = [m.start() for m in _KEYWORD_RE.finditer(lower)]
    assert secrets_module._keyword_starts(lower) == starts
    if secrets_module._password_re().search(text):  # scan's gates let it through
        assert secrets_module._may_say_password(text, lower)
    if secrets_module._aws_secret_re().search(text):
        assert secrets_module._may_hold_aws_key(text)
    assigned = [m.span() for m in secrets_module._assignments(text, lower)]
    assert assigned == [m.span() for m in secrets_module._assign_re().finditer(text)]


def test_an_ordinary_lesson_compiles_none_of_the_guarded_patterns() -> None:
    """The patterns past a cheaper test are compiled on first use: a lesson that names no
    password, token, URL or long run reaches none of them (each cost ~0.1–1.8 ms to
    compile, at every `write` and distill)."""
    guarded = [secrets_module._token_re, secrets_module._password_re,
               secrets_module._bearer_re, secrets_module._basic_re,
               secrets_module._command_password_re, secrets_module._prose_key_re,
               secrets_module._userinfo_re, secrets_module._aws_secret_re]
    for pattern in guarded:
        pattern.cache_clear()
    assert scan("# Run the API tests serially\n\nThey share one database; in parallel "
                "they deadlock on its migrations.\n") == []
    assert [p.__name__ for p in guarded if p.cache_info().currsize] == []
    assert scan("the staging password is hunter2!") and secrets_module._password_re.cache_info(
        ).currsize == 1
