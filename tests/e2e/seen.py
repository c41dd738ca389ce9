"""What the model was given: hook context found in the Messages API requests the real CLI
sent (the bodies the fake API saved).

Shapes observed with Claude Code 2.1.332 (saved request bodies, `JMEM_E2E_DUMP`):

* A hook's `additionalContext` reaches the model in a message of `role: "system"`
  inside `messages` (not in the top-level `system` field, not in a user message).
  Its `content` is a list of one `{"type": "text", "text": …, "cache_control":
  {"type": "ephemeral"}}` block in the newest system turn of a request, and a plain
  string in the earlier ones.
* Each context is `<LABEL> hook additional context: <text>`. LABEL is the event
  name — `SessionStart`, `SubagentStart`, `UserPromptSubmit`, `Stop`, `PostToolBatch`
  — or, for the tool events, the event and the tool: `PostToolUse:Read`,
  `PostToolUse:Agent`, `PostToolUseFailure:Read`. Earlier versions wrote
  `PostToolUse hook additional context:` without the tool.
* One system turn joins its parts with a blank line ("\\n\\n"): several contexts (four
  `PostToolUse:Read` and one `PostToolBatch` after a batch of four reads), and the
  CLI's own texts. The system turn after the first prompt (`messages[1]`, right after
  the user's) reads `SessionStart hook additional context: …`, `# Environment …`,
  `You are powered by the model …`, `The following deferred tools …`, `Available
  agent types …`, `The following skills are available …`, `UserPromptSubmit hook
  additional context: …`, `Today's date is 2026-12-01.`, in that order; a later one
  holds only the contexts of that step, or `[SYSTEM NOTIFICATION - NOT USER INPUT] …
  <task-notification>…`. Consecutive system turns of a resumed session come back
  merged into one. A context may itself hold blank lines, so its end is known only
  where the next label or a known CLI text begins; journal-mem's packs end in a
  newline, so a pack ends before "\\n\\n\\n".
* A fork subagent (`subagent_type: "fork"`) gets the parent's whole conversation,
  with every context injected into it so far, and its own `SubagentStart` context
  appended to the last system turn.

Other versions may put the same labelled text elsewhere (`<system-reminder>` text blocks
of user messages, say); the helpers here look in every place a text can be: the
`system` field, every message's string content, text blocks and `tool_result`
contents, and accept a label with or without the tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

LABEL = re.compile(r"(?m)^(?P<event>[A-Z][A-Za-z]+)(?::(?P<tool>\S+?))? hook additional "
                   r"context: ")
# where a context ends when no other label follows it: the CLI's own texts after it
ENDS = ("\n\n\n", "\n</system-reminder>", "\n\n# Environment\n", "\n\nYou are powered by ",
        "\n\nThe following deferred tools", "\n\nAvailable agent types",
        "\n\nThe following skills are available", "\n\nToday's date is ",
        "\n\n[SYSTEM NOTIFICATION")


@dataclass(frozen=True)
class Context:
    """One hook's additionalContext as the model got it, and where it was."""

    event: str
    tool: str | None  # `Read` of `PostToolUse:Read`; None where the label has no tool
    text: str
    place: str  # "system field", or "messages[3] (system)": index and role

    @property
    def label(self) -> str:
        return f"{self.event}:{self.tool}" if self.tool else self.event


def texts(content: Any) -> Iterator[str]:
    """Every text in a `system` field or a message's content: strings, text blocks and
    the contents of tool results."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    yield block["text"]
                if block.get("type") == "tool_result":
                    yield from texts(block.get("content"))


def places(request: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(place, text) of every text of a request body."""
    for text in texts(request.get("system")):
        yield "system field", text
    for i, message in enumerate(request.get("messages") or []):
        for text in texts(message.get("content")):
            yield f"messages[{i}] ({message.get('role')})", text


def contexts(request: dict[str, Any]) -> list[Context]:
    """Every hook context of a request, in order."""
    found = []
    for place, text in places(request):
        marks = list(LABEL.finditer(text))
        for n, mark in enumerate(marks):
            stop = marks[n + 1].start() if n + 1 < len(marks) else len(text)
            body = text[mark.end():stop]
            for end in ENDS:
                body = body.split(end, 1)[0]
            found.append(Context(mark["event"], mark["tool"], body.rstrip("\n"), place))
    return found


def summary(request: dict[str, Any]) -> str:
    """The labels and places of every hook context in a request, for a failure message."""
    held = [f"{c.label} in {c.place}" for c in contexts(request)]
    return "; ".join(held) if held else "none at all"


def where(request: dict[str, Any], line: str) -> str:
    """Which hook contexts of a request hold `line`, and how often the whole request does,
    for a failure message: a duplicate names the hooks that each delivered it."""
    holding = [f"{c.label} in {c.place}" for c in contexts(request) if line in c.text]
    whole = json.dumps(request, ensure_ascii=False).count(line)
    return (f"{line!r}: {whole} in the request; in {'; '.join(holding) or 'no hook context'}"
            f" (every context: {summary(request)})")


def hook_contexts(request: dict[str, Any], event: str, tool: str | None = None,
                  *, expect: bool = True) -> list[Context]:
    """The contexts of `event` (of `tool` only, when given: `PostToolUse:Read`, and the
    older label without a tool) in a request. Fails when there is none, unless
    `expect` is False: a test must not pass by finding nothing."""
    found = [c for c in contexts(request)
             if c.event == event and (tool is None or c.tool in (tool, None))]
    if expect and not found:
        wanted = f"{event}:{tool}" if tool else event
        raise AssertionError(f"no {wanted} hook context in the request "
                             f"({len(request.get('messages') or [])} messages); "
                             f"hook contexts it holds: {summary(request)}")
    return found


def hook_context(request: dict[str, Any], event: str, tool: str | None = None) -> str:
    """The text of the one context of `event` in a request; fails loudly on none or
    several."""
    found = hook_contexts(request, event, tool)
    assert len(found) == 1, (f"{len(found)} {event} hook contexts, one expected: "
                             f"{summary(request)}")
    return found[0].text


def injected(request: dict[str, Any], *events: str) -> str:
    """The texts of every hook context of `events` (of any event when none is named) in a
    request, joined by blank lines; fails when there is none."""
    found = [c for c in contexts(request) if not events or c.event in events]
    assert found, (f"no hook context of {', '.join(events) or 'any event'} in the request; "
                   f"hook contexts it holds: {summary(request)}")
    return "\n\n".join(c.text for c in found)
