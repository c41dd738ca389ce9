"""`jmem init --ci github`: the CI job that is the single distiller of a fleet.

See docs/DESIGN.md, "Many machines".

On every push to the memory branch that touches a journal, and on a daily
schedule, one job runs `jmem check` (the backstop for `--no-verify`) and
`jmem distill --push`. All runs share one concurrency group that never
cancels a running job, so two CI distillers never race; a push that loses
to a person's push is retried on the new tip by `distill --push` itself.
The push uses the workflow's GITHUB_TOKEN, whose pushes start no workflow,
so the distill commit does not trigger the job again.

What the job installs: a source pinned to the code running now. The CI workflow runs
with `contents: write`, so whatever it installs can push
to the repository. A bare package name is not a source: journal-mem is not on
the public package index, and whoever registers the name later would run
their code in that job. So the default pins exactly the code that ran
`jmem init`, and only when that can be verified:

* running from a git checkout (editable install, or PYTHONPATH): every file
  of the running package equals HEAD's, HEAD is contained in a
  remote-tracking branch (so the remote has it), and that remote has an
  https URL CI can fetch (an scp-style or ssh:// URL is read as https on the
  same host) → `pip install "journal-mem @ git+URL@COMMIT"`;
* installed by pip from a git URL (PEP 610 `direct_url.json`, `vcs_info`) →
  the URL at the commit pip recorded; from an archive URL with a hash → that
  URL with its hash; from a local folder → the checkout rules above, with
  the installed files compared against that folder's HEAD.

Anything else (a package index, a dirty checkout, a commit no remote has)
is refused with the reason, and `--ci-install COMMAND` says how instead.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from importlib import metadata
from urllib.parse import unquote, urlsplit

import journal_mem
from journal_mem.errors import ConfigError
from journal_mem.fsutil import create_new
from journal_mem.gitops import checkout, gitcore
from journal_mem.resources import fill

WORKFLOW = os.path.join(".github", "workflows", "journal-mem.yml")
PROVIDERS = ("github",)
ZERO = "0" * 40


def render_workflow(branch: str, memory_root: str, install: str, curator: bool = False) -> str:
    """The workflow file's text; `install` (one or more shell lines) runs as a block.

    Every other value is written as a YAML double-quoted string (JSON's escapes
    are YAML's): a newline or a `#` in a value cannot add a key or a step to a
    job that holds `contents: write`, and scripts read them as environment
    variables, never pasted into shell. The branch filter also escapes the
    characters GitHub reads as a pattern (`+`, `!`). With `curator`, a scheduled
    `curate` job runs `jmem consolidate --propose` and opens a pull request with
    the lessons it files (it never pushes to `branch`).
    """
    install = install.strip().replace("\n", "\n" + " " * 10)
    text = fill("github-workflow.yml", branch=json.dumps(branch),
                branch_filter=json.dumps(_literal(branch)),
                journals=json.dumps(_literal(memory_root.strip("/")) + "/*/journal/**"),
                install=install, zero=ZERO)
    if not curator:
        return text
    return text + fill("github-curator-job.yml", branch=json.dumps(branch), install=install,
                       curator_journal=json.dumps(memory_root.strip("/") + "/curator/journal"))


def _literal(value: str) -> str:
    """`value` as a GitHub filter pattern that matches only itself."""
    return _FILTER_SPECIAL.sub(lambda m: "\\" + m.group(), value)


_FILTER_SPECIAL = re.compile(r"[+!?\[\]*]")


def check_branch(root: str, branch: str) -> None:
    """Refuse a branch name git would refuse (`check-ref-format --branch`), or one that
    GitHub would evaluate as an expression (`${{`): it is pasted into the workflow."""
    res = gitcore.run(["check-ref-format", "--branch", branch], root, clean=True, check=False)
    if not res.ok or res.text().strip() != branch or "${{" in branch:
        raise ConfigError(f"--ci: distill.branch {branch!r} is not a branch name git accepts "
                          "as it is (git check-ref-format --branch), so it cannot go into "
                          f"{WORKFLOW}",
                          hint="set distill.branch in .claude/journal-mem.toml to a plain "
                               "branch name such as main")


def write_workflow(root: str, branch: str, memory_root: str, install: str,
                   curator: bool = False) -> tuple[str, bool]:
    """Create the workflow in the checkout at `root` unless one exists.

    Returns (repository-relative path, created). An existing file is never
    overwritten: it may hold the team's own changes.
    """
    check_branch(root, branch)
    path = os.path.join(root, WORKFLOW)
    return WORKFLOW, create_new(path, render_workflow(branch, memory_root, install, curator))


DIST = "journal-mem"
PACKAGE = "journal_mem"
HINT = ('pass --ci-install with a pinned source, e.g. --ci-install '
        '\'pip install "journal-mem @ git+https://HOST/OWNER/REPO@COMMIT"\'')
_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!/)(.+)$")  # git@github.com:o/r.git


@dataclass(frozen=True)
class Source:
    """The install command CI runs, and why it is the right one."""

    command: str
    why: str


def choose(explicit: str | None) -> Source:
    """`explicit` when given; else the verified pin of the running code, else ConfigError."""
    if explicit is not None and explicit.strip():
        return Source(explicit.strip(), "given with --ci-install")
    package = os.path.dirname(os.path.abspath(_package_file()))
    reasons: list[str] = []
    found = from_checkout(package, package, reasons) if _tracked(package) else \
        from_metadata(package, reasons)
    if found is None:
        raise ConfigError("--ci github: no verifiable source to install journal-mem from in "
                          "CI (" + "; ".join(reasons) + "); a bare package name could install "
                          "someone else's code in a job that can push", hint=HINT)
    return found


def _package_file() -> str:
    return journal_mem.__file__ or ""


def _tracked(folder: str) -> bool:
    """True when `folder` is a tracked folder of a git checkout (not a site-packages copy)."""
    return checkout.is_tracked(folder, "__init__.py")


def from_checkout(checkout_dir: str, package: str, reasons: list[str]) -> Source | None:
    """Pin HEAD of the checkout holding `checkout_dir` when the running `package` equals it."""
    found = checkout.top_and_head(checkout_dir)
    if found is None:
        reasons.append(f"{checkout_dir} is not a git checkout with a commit")
        return None
    top, head = found
    differs = changed_files(top, head, package)
    if differs:
        reasons.append(f"the running code differs from commit {head[:12]} of {top} "
                       f"({', '.join(differs[:3])}{', …' if len(differs) > 3 else ''})")
        return None
    url, ref = published_in(top, head)
    if not url:
        reasons.append(f"commit {head[:12]} of {top} is in no remote-tracking branch of a "
                       "remote with an https URL (push it, or fetch)")
        return None
    return Source(f'pip install "{DIST} @ git+{url}@{head}"',
                  f"commit {head[:12]}, the code this jmem runs from, as in {ref}")


def changed_files(top: str, head: str, package: str) -> list[str]:
    """Files of the running `package` that differ from (or are missing in) `head`."""
    committed = checkout.blob_ids(top, head, PACKAGE)
    running = sorted(
        os.path.relpath(os.path.join(folder, name), os.path.dirname(package))
        for folder, dirs, names in os.walk(package)
        for name in names
        if "__pycache__" not in folder and not name.endswith((".pyc", ".pyo")))
    ids = checkout.hash_files(top, [os.path.join(os.path.dirname(package), r) for r in running])
    found = dict(zip([r.replace(os.sep, "/") for r in running], ids, strict=True))
    wanted = {p for p in committed if p.endswith(".py")} | set(found)
    return sorted(p for p in wanted if found.get(p) != committed.get(p))


def published_in(top: str, head: str) -> tuple[str, str]:
    """(https URL, remote-tracking ref) of a remote that has `head`; ("", "") if none."""
    for _remote, url, names in checkout.remotes_with(top, head):
        if https_url(url) and names:
            return https_url(url), names[0]
    return "", ""


def https_url(url: str) -> str:
    """`url` as an https URL CI can fetch anonymously-or-with-token; "" for a local path."""
    if url.startswith("https://"):
        return url
    if url.startswith(("ssh://", "git+ssh://")):
        rest = url.split("://", 1)[1]
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].split(":")[0]
        return f"https://{host}/{path}" if host and path else ""
    match = _SCP.match(url)
    if match and "/" not in match.group(1) and not os.path.exists(url):
        return f"https://{match.group(1)}/{match.group(2)}"
    return ""


def from_metadata(package: str, reasons: list[str]) -> Source | None:
    """Pin what pip recorded for the installed distribution (PEP 610 `direct_url.json`)."""

    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        reasons.append(f"{package} is neither a git checkout nor an installed distribution")
        return None
    if os.path.dirname(os.path.abspath(str(dist.locate_file(PACKAGE)))) != \
            os.path.dirname(package):
        reasons.append(f"the installed {DIST} metadata describes another copy than {package}")
        return None
    raw = dist.read_text("direct_url.json")
    if not raw:
        reasons.append(f"{DIST} {dist.version} was installed from a package index, and a "
                       "version number alone does not say whose code CI would get")
        return None
    return from_direct_url(json.loads(raw), package, reasons)


def from_direct_url(data: dict[str, object], package: str, reasons: list[str]) -> Source | None:
    """The pin for one PEP 610 record (`vcs_info`, `archive_info` or `dir_info`)."""
    url = str(data.get("url", ""))
    vcs, archive = data.get("vcs_info"), data.get("archive_info")
    sub = data.get("subdirectory")
    suffix = f"#subdirectory={sub}" if isinstance(sub, str) and sub else ""
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and vcs.get("commit_id"):
        if https_url(url):
            commit = str(vcs["commit_id"])
            return Source(f'pip install "{DIST} @ git+{https_url(url)}@{commit}{suffix}"',
                          f"commit {commit[:12]}, the one pip installed this jmem from")
        reasons.append(f"installed from {url}, which CI cannot fetch over https")
        return None
    if isinstance(archive, dict):
        hashes = archive.get("hashes")
        algo, digest = next(iter(hashes.items())) if isinstance(hashes, dict) and hashes \
            else str(archive.get("hash", "=")).split("=", 1)
        if url.startswith("https://") and digest:
            return Source(f'pip install "{DIST} @ {url}#{algo}={digest}"',
                          "the archive pip installed this jmem from, checked by its hash")
        reasons.append(f"installed from {url} without an https URL and a hash")
        return None
    if url.startswith("file://"):

        return from_checkout(unquote(urlsplit(url).path), package, reasons)
    reasons.append(f"installed from {url or 'an unknown place'}")
    return None
