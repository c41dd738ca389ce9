"""Claude Code's hook protocol: the JSON a hook reads on stdin and the JSON it prints.

A hook reads one JSON object on stdin (`session_id`, `cwd`, `hook_event_name`;
SessionStart adds `source` and, under `claude --agent NAME`, `agent_type`;
SubagentStart/SubagentStop add `agent_id` and `agent_type`; Stop/SubagentStop
add `stop_hook_active` and `background_tasks`, what is still in flight;
PostToolUse, PostToolUseFailure and PostToolBatch follow tool calls).
Context goes back as `hookSpecificOutput.additionalContext` — for
SessionStart, SubagentStart, UserPromptSubmit, the tool events and
Stop/SubagentStop alike — which Claude Code caps at 10,000 characters
counted in UTF-16 code units (an emoji counts 2): over the cap the model gets
a file path and a short preview instead, so every answer is cut below it
with a margin (docs/DESIGN.md, "Claude Code hooks").
Standard library only: the hook fast path imports this module.
"""

from __future__ import annotations

from journal_mem import jsonc

CONTEXT_LIMIT = 10_000  # UTF-16 code units of additionalContext Claude Code accepts
PACK_LIMIT = 9_500  # what jmem sends at most: a margin below the cap


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Claude Code counts its output cap (an emoji is 2).
    ASCII text is its length: the UTF-16 codec, loaded for the first text that is not,
    cost a pack ~0.3 ms to import."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_to_units(text: str, limit: int) -> str:
    """`text` cut at a line end so that it has at most `limit` UTF-16 units."""
    if utf16_len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        size = utf16_len(line) + 1
        if used + size > limit:
            break
        kept.append(line)
        used += size
    return "\n".join(kept) + "\n" if kept else ""


class HookInputError(ValueError):
    """The hook's stdin is not the JSON object Claude Code sends."""


def read_input(data: bytes) -> dict[str, object]:
    """The hook input object; raises HookInputError on anything else."""
    try:
        value = jsonc.loads(data.decode("utf-8")) if data.strip() else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookInputError(f"hook input is not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise HookInputError("hook input is not a JSON object")
    return value


def text_field(payload: dict[str, object], name: str) -> str:
    """A string field of the hook input ("" when absent or not a string)."""
    value = payload.get(name)
    return value if isinstance(value, str) else ""


# `background_tasks` kinds that end by waking the session again (a task notification
# starts a new turn): delegated work. A background shell or monitor may run for ever
# (a dev server), so a session is not kept waiting for one.
DELEGATED = ("subagent", "workflow")


def background_work(payload: dict[str, object]) -> bool:
    """True when a Stop ends a turn while delegated work still runs in the background
    (`background_tasks` lists what is in flight; empty when nothing is): the session is
    paused, not done, and its real end is a later Stop."""
    tasks = payload.get("background_tasks")
    return isinstance(tasks, list) and any(
        isinstance(t, dict) and (t.get("type") in DELEGATED or "agent" in str(t.get("type")))
        for t in tasks)


def is_fork(payload: dict[str, object]) -> bool:
    """True for a fork subagent (`subagent_type: "fork"`): its SubagentStart/SubagentStop
    say `agent_type: "fork"` and nothing else marks it; it holds the parent's whole
    conversation."""
    return text_field(payload, "agent_type") == "fork" and \
        text_field(payload, "hook_event_name") in ("SubagentStart", "SubagentStop")


def prompt_source(payload: dict[str, object]) -> str:
    """Who sent a UserPromptSubmit's prompt: `user` when the input does not say (2.1.332
    never does), else its `source` (`sdk`, `system`, `loop_wakeup`, `schedule_wakeup`…)."""
    return text_field(payload, "source") or "user"


def context_output(event: str, text: str) -> str:
    """The answer adding `text` to the model's context (cut below the cap).

    The same shape serves SessionStart, SubagentStart, UserPromptSubmit,
    PostToolUse, PostToolUseFailure, PostToolBatch and Stop/SubagentStop (where
    it continues the turn as plain context, not as the "blocking error"
    `decision: block` is shown as).
    """
    return jsonc.dumps({"hookSpecificOutput": {"hookEventName": event or "SessionStart",
                                               "additionalContext": cut_to_units(text,
                                                                                 PACK_LIMIT)}},
                       ensure_ascii=False)
