"""The end-to-end tests name the Claude Code version they run, in the header and (seen
with `-q` too) in the summary at the end."""

from __future__ import annotations

import pytest
from claudecode import cache_dir, described


def pytest_report_header(config: pytest.Config) -> str:
    return f"claude code e2e: {described()} (cache {cache_dir()})"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"claude code e2e: {described()} (cache {cache_dir()})")
