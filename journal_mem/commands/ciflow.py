"""`jmem init --ci github`: the CI job that is the single distiller of a fleet (DESIGN §6).

On every push to the memory branch that touches a journal, and on a daily
schedule, one job runs `jmem check` (the backstop for `--no-verify`) and
`jmem distill --push`. All runs share one concurrency group that never
cancels a running job, so two CI distillers never race; a push that loses
to a person's push is retried on the new tip by `distill --push` itself.
The push uses the workflow's GITHUB_TOKEN, whose pushes start no workflow,
so the distill commit does not trigger the job again.
"""

from __future__ import annotations

import os

from journal_mem.fsutil import create_new

WORKFLOW = os.path.join(".github", "workflows", "journal-mem.yml")
DEFAULT_INSTALL = "pip install journal-mem"
PROVIDERS = ("github",)
ZERO = "0" * 40

_TEMPLATE = """\
# Written by `jmem init --ci github` (journal-mem): the single writer of the
# distilled memory. Machines push journal entries; this job checks the memory
# and distills it on top of the branch, retrying when a push races it.
name: journal-mem

on:
  push:
    branches: [{branch}]
    paths: ["{memory_root}/*/journal/**"]
  schedule:
    - cron: "17 3 * * *"
  workflow_dispatch:

permissions:
  contents: write

concurrency:
  group: journal-mem-distill
  cancel-in-progress: false

jobs:
  distill:
    runs-on: ubuntu-latest
    timeout-minutes: 15
    steps:
      - uses: actions/checkout@v4
        with:
          ref: {branch}
          fetch-depth: 0
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install journal-mem
        run: {install}
      - name: Check the memory
        env:
          BEFORE: ${{{{ github.event.before }}}}
        run: |
          if [ -n "$BEFORE" ] && [ "$BEFORE" != {zero} ] \\
              && git cat-file -e "$BEFORE^{{commit}}" 2>/dev/null; then
            jmem check --base "$BEFORE"
          else
            jmem check
          fi
      - name: Distill and push
        run: |
          git config user.name "journal-mem"
          git config user.email "journal-mem@users.noreply.github.com"
          jmem distill --push origin
"""


def render_workflow(branch: str, memory_root: str, install: str = DEFAULT_INSTALL) -> str:
    """The workflow file's text."""
    return _TEMPLATE.format(branch=branch, memory_root=memory_root.strip("/"),
                            install=install.strip() or DEFAULT_INSTALL, zero=ZERO)


def write_workflow(root: str, branch: str, memory_root: str, install: str) -> tuple[str, bool]:
    """Create the workflow in the checkout at `root` unless one exists.

    Returns (repository-relative path, created). An existing file is never
    overwritten: it may hold the team's own changes.
    """
    path = os.path.join(root, WORKFLOW)
    return WORKFLOW, create_new(path, render_workflow(branch, memory_root, install))
