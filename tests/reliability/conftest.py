"""The reliability suite: sizes for the normal run and the long run.

The normal test command runs every test here at a size that takes a few
minutes in all; `pytest --long` or `JMEM_RELIABILITY_SCALE=long` runs the
full sizes (16 writers x 1,000 lessons, 200 kills, 100,000 fuzzed
entries). Each test records its figures with `figure(name, value)`; the test
session prints them at the end ("reliability figures").
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

SIZES = {
    # name: (normal, long)
    "writers": (16, 16),
    "lessons_per_writer": (250, 1000),
    "kill_repos": (3, 10),
    "kills_per_repo": (15, 20),
    "race_rounds": (10, 50),
    "fuzz_examples": (10_000, 100_000),
}


def is_long(config: pytest.Config) -> bool:
    """The long run: `--long`, or JMEM_RELIABILITY_SCALE=long (read before the autouse
    fixture clears every JMEM_* variable)."""
    return bool(config.getoption("--long")) or os.environ.get(
        "JMEM_RELIABILITY_SCALE", "") == "long"


def size(config: pytest.Config, name: str) -> int:
    normal, long = SIZES[name]
    return long if is_long(config) else normal


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`kill_repo` is parametrized by the number of repositories of this run's size."""
    if "kill_repo" in metafunc.fixturenames:
        metafunc.parametrize("kill_repo", range(size(metafunc.config, "kill_repos")))


@pytest.fixture
def sized(pytestconfig: pytest.Config) -> Callable[[str], int]:
    """`sized("writers")`: this run's size for a named figure."""
    return lambda name: size(pytestconfig, name)


@pytest.fixture
def figure(record_property: Callable[[str, object], None]) -> Callable[[str, object], None]:
    """Record one figure for the session summary and the README."""
    return lambda name, value: record_property(f"reliability: {name}", value)
