"""Claude Code's hook protocol: the JSON a hook reads on stdin and the JSON it prints.

A hook reads one JSON object on stdin (`session_id`, `cwd`, `hook_event_name`;
SubagentStart/SubagentStop add `agent_id` and `agent_type`; Stop/SubagentStop
add `stop_hook_active`). SessionStart/SubagentStart inject context with
`hookSpecificOutput.additionalContext`, capped at `CONTEXT_LIMIT` characters;
a Stop hook keeps the agent going with `{"decision": "block", "reason": …}`
(docs/DESIGN.md, "Claude Code hooks"). Standard library only: the wake-up
hook's fast path imports this module.
"""

from __future__ import annotations

import json

CONTEXT_LIMIT = 10_000  # characters of additionalContext Claude Code accepts


class HookInputError(ValueError):
    """The hook's stdin is not the JSON object Claude Code sends."""


def read_input(data: bytes) -> dict[str, object]:
    """The hook input object; raises HookInputError on anything else."""
    try:
        value = json.loads(data.decode("utf-8")) if data.strip() else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"hook input is not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise HookInputError("hook input is not a JSON object")
    return value


def text_field(payload: dict[str, object], name: str) -> str:
    """A string field of the hook input ("" when absent or not a string)."""
    value = payload.get(name)
    return value if isinstance(value, str) else ""


def context_output(event: str, text: str) -> str:
    """The SessionStart/SubagentStart answer injecting `text` (cut to the limit)."""
    if len(text) > CONTEXT_LIMIT:
        text = text[: CONTEXT_LIMIT - 1].rsplit("\n", 1)[0] + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event or "SessionStart",
                                              "additionalContext": text}},
                      ensure_ascii=False)


def block_output(reason: str) -> str:
    """The Stop/SubagentStop answer that keeps the agent going with `reason`."""
    return json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False)
