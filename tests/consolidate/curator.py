"""A scripted curator: reads the plan on stdin and merges exactly its duplicate clusters.

    python curator.py [--bad]

Each `duplicates` item becomes one lesson: the first fact's title and topic, every
fact's body, superseding every key of the item. With `--bad`, it also proposes
lessons that must be refused (keys of two items, an unknown item, a field the
curator may not set), to show that the good ones still go on.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    plan = json.load(sys.stdin)
    out: list[dict[str, object]] = []
    dups = [item for item in plan if item["kind"] == "duplicates"]
    for item in dups:
        first = item["facts"][0]
        out.append({"item": item["id"], "title": first["title"], "topic": first["topic"],
                    "body": " ".join(f["body"] for f in item["facts"]),
                    "supersedes": item["keys"]})
    if "--bad" in sys.argv and len(dups) >= 2:
        a, b = dups[0], dups[1]
        out.append({"item": a["id"], "title": "Two items at once", "topic": "general",
                    "supersedes": [a["keys"][0], b["keys"][0]]})
        out.append({"item": "duplicates-0000000000", "title": "No such item",
                    "topic": "general", "supersedes": a["keys"]})
        out.append({"item": b["id"], "title": "Sets its own holders", "topic": "general",
                    "supersedes": b["keys"], "applies_to": ["all"]})
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
