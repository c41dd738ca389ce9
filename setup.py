"""The commands setuptools installs, which differ by platform; the rest is in pyproject.toml.

`jmem` runs at every hook of every agent. The console script an installer makes of an
entry point imports `re` before anything else (to strip `.exe` from its own name):
~6 ms of a hook whose own work is under 1 ms. So on Linux and macOS `jmem` is
`journal_mem/scripts/jmem`, installed as it is (its `#!python` line made the install's
interpreter). Windows runs no such file from `cmd`, PowerShell or Git for Windows'
`sh` (pip makes no `.exe` for it): there `jmem` is a console script, as `journal-mem`
is everywhere.
"""

import os

from setuptools import setup

MAIN = "journal_mem.main:main"
LAUNCHER = "journal_mem/scripts/jmem"


def commands(windows: bool) -> dict[str, list[str] | dict[str, list[str]]]:
    """setup()'s arguments that install `jmem` and `journal-mem`."""
    if windows:
        return {"entry_points": {"console_scripts": [f"jmem = {MAIN}", f"journal-mem = {MAIN}"]}}
    return {"entry_points": {"console_scripts": [f"journal-mem = {MAIN}"]},
            "scripts": [LAUNCHER]}


if __name__ == "__main__":
    setup(**commands(os.name == "nt"))
