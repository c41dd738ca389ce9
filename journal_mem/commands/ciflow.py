"""`jmem init --ci github`: the CI job that is the single distiller of a fleet.

See docs/DESIGN.md, "Many machines".

On every push to the memory branch that touches a journal, and on a daily
schedule, one job runs `jmem check` (the backstop for `--no-verify`) and
`jmem distill --push`. All runs share one concurrency group that never
cancels a running job, so two CI distillers never race; a push that loses
to a person's push is retried on the new tip by `distill --push` itself.
The push uses the workflow's GITHUB_TOKEN, whose pushes start no workflow,
so the distill commit does not trigger the job again. What the job installs
is chosen by `cisource.py`.
"""

from __future__ import annotations

import os

WORKFLOW = os.path.join(".github", "workflows", "journal-mem.yml")
PROVIDERS = ("github",)
ZERO = "0" * 40


def render_workflow(branch: str, memory_root: str, install: str) -> str:
    """The workflow file's text; `install` (one or more shell lines) runs as a block."""
    from journal_mem.resources import fill

    return fill("github-workflow.yml", branch=branch, memory_root=memory_root.strip("/"),
                install=install.strip().replace("\n", "\n" + " " * 10), zero=ZERO)


def write_workflow(root: str, branch: str, memory_root: str, install: str) -> tuple[str, bool]:
    """Create the workflow in the checkout at `root` unless one exists.

    Returns (repository-relative path, created). An existing file is never
    overwritten: it may hold the team's own changes.
    """
    path = os.path.join(root, WORKFLOW)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return WORKFLOW, False
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(render_workflow(branch, memory_root, install))
    return WORKFLOW, True
