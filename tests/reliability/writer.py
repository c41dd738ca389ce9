"""One writer process of the reliability suite: files COUNT lessons through the real
writer (`journal.record`, what `jmem write` calls) from CWD, every fourth one through
the outbox when asked, and prints `name<TAB>key` per lesson.

    python tests/reliability/writer.py CWD WRITER COUNT AGENT [outbox]
"""

from __future__ import annotations

import os
import sys

from journal_mem.journal.entry import build
from journal_mem.journal.files import record
from journal_mem.repo import open_context


def main(cwd: str, writer: str, count: int, agent: str, outbox: bool) -> None:
    layout = open_context(cwd).layout
    out = []
    for i in range(count):
        # One shared title: every writer races for the same file-name slug.
        entry = build(agent=agent, topic="load", title="Shared lesson under load",
                      key=f"w{writer}-{i}", body=f"Writer {writer}, lesson {i}.")
        written = record(layout, entry, outbox=outbox and i % 4 == 0)
        out.append(f"{os.path.basename(written.path)}\t{written.key}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:] == ["outbox"])
