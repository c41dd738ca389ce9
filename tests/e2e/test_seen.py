"""The helpers that find hook context in saved request bodies (seen.py), on bodies shaped
like the ones Claude Code sent: 2.1.332's `role: "system"` turns labelled per tool, and
the older `<system-reminder>` text blocks of user messages. No CLI needed."""

from __future__ import annotations

from typing import Any

import pytest
from seen import contexts, hook_context, hook_contexts, injected

PACK = "# journal-mem: memory of agent main\n- Main fact [mn-one]\n"


def system_turn(*parts: str, blocks: bool = True) -> dict[str, Any]:
    text = "\n\n".join(parts)
    content: Any = [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}] \
        if blocks else text
    return {"role": "system", "content": content}


def body(*messages: dict[str, Any], system: Any = "You are Claude.") -> dict[str, Any]:
    return {"system": system, "messages": list(messages)}


NEW = body(  # as 2.1.332 sent it after a batch of four reads
    {"role": "user", "content": [{"type": "text", "text": "please READ4"}]},
    system_turn("The following deferred tools are now available via ToolSearch.\nCronCreate",
                f"SessionStart hook additional context: {PACK}",
                "Today's date is 2026-12-01.", blocks=False),
    {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Read",
                                       "input": {}} for i in range(4)]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                  "content": "1\tx"} for i in range(4)]},
    system_turn(*[f"PostToolUse:Read hook additional context: read {i}" for i in range(4)],
                "PostToolBatch hook additional context: the batch\n\nhas two paragraphs"),
)
OLD = body(  # the earlier form: no tool in the label, inside a user message's text block
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t0", "content": "1\tx"},
        {"type": "text", "text": "<system-reminder>\nPostToolUse hook additional context: "
                                 "live news\n</system-reminder>"}]},
)


def test_labels_with_and_without_the_tool_in_system_turns_and_user_blocks() -> None:
    assert [(c.label, c.place) for c in contexts(NEW)] == [
        ("SessionStart", "messages[1] (system)"),
        *[("PostToolUse:Read", "messages[4] (system)")] * 4,
        ("PostToolBatch", "messages[4] (system)")]
    assert hook_context(NEW, "SessionStart") == PACK.rstrip("\n")  # not "Today's date"
    assert [c.text for c in hook_contexts(NEW, "PostToolUse", "Read")] == \
        [f"read {i}" for i in range(4)]
    assert hook_context(NEW, "PostToolBatch") == "the batch\n\nhas two paragraphs"
    assert hook_context(OLD, "PostToolUse", "Read") == "live news"  # no tool in the label
    assert hook_contexts(NEW, "PostToolUse", "Bash", expect=False) == []


def test_the_system_field_and_tool_results_are_searched_too() -> None:
    request = body({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                 "content": [{"type": "text", "text":
                                                              "Stop hook additional context: "
                                                              "in a result"}]}]},
                   system=[{"type": "text", "text": "x"},
                           {"type": "text", "text": "SubagentStart hook additional context: "
                                                    "in the system field"}])
    assert hook_context(request, "SubagentStart") == "in the system field"
    assert hook_context(request, "Stop") == "in a result"


def test_finding_nothing_fails_loudly_and_says_what_there_was() -> None:
    with pytest.raises(AssertionError, match=r"no UserPromptSubmit hook context.*"
                                             r"SessionStart in messages\[1\] \(system\)"):
        hook_contexts(NEW, "UserPromptSubmit")
    with pytest.raises(AssertionError, match="none at all"):
        hook_context(body({"role": "user", "content": "hello"}), "SessionStart")
    with pytest.raises(AssertionError, match="4 PostToolUse hook contexts, one expected"):
        hook_context(NEW, "PostToolUse")
    with pytest.raises(AssertionError, match="no hook context of Stop"):
        injected(NEW, "Stop")
    assert "Main fact" in injected(NEW)
