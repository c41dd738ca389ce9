"""The end-to-end tests name the Claude Code version they run in the test header."""

from __future__ import annotations

import pytest
from claudecode import VERSION, cache_dir


def pytest_report_header(config: pytest.Config) -> str:
    return f"claude code e2e: {VERSION} (cache {cache_dir()})"
