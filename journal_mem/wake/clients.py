"""Which coding-agent client runs a hook, and the answer that client reads.

One set of hooks serves every client: `jmem wake|remind --hook CLIENT`. The
hook reads the client's payload, works in Claude Code's terms (its event names
and fields, which `hooks.py` understands) and answers in the caller's own
format — or prints nothing. Never another client's format: Cursor (with its
"third-party" setting) and Copilot CLI run the hooks of `.claude/settings.json`
with payloads of their own, and a Claude-shaped answer is not what they read.

What each client sends and reads was checked by running it where it can run
offline (docs/clients.md):

* Codex CLI sends Claude Code's fields and event names, reads
  `hookSpecificOutput.additionalContext` at SessionStart, UserPromptSubmit and
  PostToolUse, and `{"decision": "block", "reason"}` at Stop (the reason comes
  back as a user turn: the reminder).
* Gemini CLI has its own event names: BeforeAgent is the prompt, AfterTool the
  tool call, AfterAgent the end of a turn (`{"decision": "deny", "reason"}`
  makes one more turn). A resumed session comes back without its first prompt,
  which carried the pack: a resume gets the whole pack again, not only what
  changed.
* Qwen Code (a Gemini CLI fork) reads `.qwen/settings.json` hooks under Claude
  Code's event names and payload fields (plus a `timestamp`), its tools named as
  Gemini's (`run_shell_command`, `write_file`, `edit`); it reads
  `hookSpecificOutput.additionalContext` at SessionStart, UserPromptSubmit (which
  runs before every model call, after tool results too) and PostToolUse, and
  `{"decision": "block", "reason"}` at Stop (the reason comes back as a prompt).
* Copilot CLI runs the hooks of `.claude/settings.json` with Claude Code's event
  names and snake_case fields plus an ISO `timestamp` (which Claude Code never
  sends), its tools named `Bash`, `Write`, `Edit`, and a tool's outcome in
  `tool_result` (`result_type`, `text_result_for_llm`). It ignores what
  SessionStart, UserPromptSubmit and PostToolUse print, and reads
  `{"decision": "block", "reason"}` at Stop (the reason comes back as the next
  prompt): its sessions are tracked from the start, their tool calls noted,
  and only Stop answers — the reminder, and what changed during the turn.
  Its memory comes from the `AGENTS.md` block and `jmem mcp`.
* Cursor (`conversation_id`, `workspace_roots`, camelCase events) and Copilot's
  own `.github/hooks` shape (`sessionId`, camelCase), which jmem does not install,
  get nothing: what Cursor's start hook may answer is not verified.

Codex, Gemini, Qwen Code and Copilot only report tool calls to hooks, not in a
transcript jmem can read, so their tool hooks note an edit or commit in the
session's state: the reminder asks only a session that did work. Standard
library only: this is the hook fast path.
"""

from __future__ import annotations

import os
import sys

from journal_mem import jsonc
from journal_mem.gitops.gitcore import quick_common_dir
from journal_mem.wake import claude as protocol
from journal_mem.wake import sessions

CLIENTS = ("claude", "codex", "gemini", "qwen")  # the values of --hook
FOREIGN = ("cursor", "copilot-camel")  # recognised by their payloads, answered with nothing
# each client's own event name -> the Claude Code event jmem handles it as
EVENTS = {
    "codex": {"SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit",
              "PostToolUse": "PostToolUse", "Stop": "Stop"},
    "gemini": {"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit",
               "AfterTool": "PostToolUse", "AfterAgent": "Stop"},
    # Claude Code's names; its prompt hook runs before every model call, tool results too
    "qwen": {"SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit",
             "PostToolUse": "PostToolUse", "Stop": "Stop"},
    # its prompt's and tool's hooks print to nobody: the tool hook only notes the call
    "copilot": {"SessionStart": "SessionStart", "PostToolUse": "PostToolUse", "Stop": "Stop"},
}
# what continues the turn with a reason
STOP_DECISION = {"codex": "block", "gemini": "deny", "qwen": "block", "copilot": "block"}
SILENT = {"copilot": ("SessionStart", "PostToolUse")}  # events whose output the client ignores
NAMES = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI",
         "qwen": "Qwen Code",
         "cursor": "Cursor", "copilot": "GitHub Copilot CLI",
         "copilot-camel": "GitHub Copilot CLI (.github/hooks)"}
# tools that change the checkout, as each client names them (a shell command counts when
# it commits: `_COMMIT` below)
EDIT_TOOLS = frozenset({"apply_patch", "write_file", "replace", "edit", "Write", "Edit"})
SHELL_TOOLS = frozenset({"Bash", "run_shell_command", "shell", "exec_command"})


class _Caller:
    """The client of this hook process and its own name for the event (one per process)."""

    client = "claude"
    event = ""


_CALLER = _Caller()


def detect(payload: dict[str, object], declared: str) -> str:
    """The client that sent `payload` to a hook installed for `declared`."""
    if "session_id" not in payload and ("conversation_id" in payload
                                         or "workspace_roots" in payload):
        return "cursor"
    if "sessionId" in payload and "session_id" not in payload:
        return "copilot-camel"  # its camelCase events (`.github/hooks`, not installed)
    if declared == "claude" and "timestamp" in payload:
        return "copilot"  # its Claude-named events, which add an ISO timestamp
    return declared


def begin(declared: str, data: bytes) -> bytes | None:
    """The payload as `hooks.py` reads it (Claude Code's event names), or None when this
    client and event get no answer (the hook then prints nothing and exits 0).

    Raises `protocol.HookInputError` on input that is not a JSON object, as
    `hooks.py` would.
    """
    _CALLER.client = declared  # a payload that is no JSON is reported in no client's format
    payload = protocol.read_input(data)
    client = detect(payload, declared)
    _CALLER.client = client
    _CALLER.event = protocol.text_field(payload, "hook_event_name")
    if client in FOREIGN:
        print(f"journal-mem: a {NAMES[client]} hook payload: nothing answered (its memory "
              "comes from AGENTS.md and `jmem mcp`)", file=sys.stderr)
        return None
    if client == "claude":
        if _CALLER.event == "PostToolUse":
            note_lesson_call(payload)  # (its other work is read from the transcript)
        return data
    event = EVENTS[client].get(_CALLER.event)
    if event is None:
        return None
    payload["hook_event_name"] = event
    if client == "copilot":
        _copilot_result(payload)
        if event == "PostToolUse":  # printed to nobody: only noted
            note_work(payload)
            return None
    if client == "gemini" and payload.get("source") == "resume":
        payload["source"] = "startup"  # its resumed session lost the first pack
    if event == "PostToolUse":
        note_work(payload)
    return jsonc.dumps(payload).encode()


def answer(event: str, text: str) -> str | None:
    """The JSON line that gives `text` to the model at `event` (Claude Code's name), in
    the caller's format; None when it has none."""
    client = _CALLER.client
    if client == "claude":
        return protocol.context_output(event, text)
    if client not in STOP_DECISION:
        return None
    if event in SILENT.get(client, ()):
        return None
    text = protocol.cut_to_units(text, protocol.PACK_LIMIT)
    if event in ("Stop", "SubagentStop"):
        return jsonc.dumps({"decision": STOP_DECISION[client], "reason": text},
                           ensure_ascii=False)
    own = _CALLER.event or event
    return jsonc.dumps({"hookSpecificOutput": {"hookEventName": own,
                                               "additionalContext": text}},
                       ensure_ascii=False)


def ends_turn_unseen() -> bool:
    """True when this hook ends a turn after which no hook of the turn runs: Codex's Stop
    and Gemini's AfterAgent (they have no PostToolBatch), Copilot's Stop (its tool hooks
    print to nobody), so a change not yet given comes with it."""
    return _CALLER.client in STOP_DECISION


def reads(event: str) -> bool:
    """True when the calling client reads what this hook prints at `event` (Claude
    Code's name): a session start it ignores gives the session nothing."""
    return event not in SILENT.get(_CALLER.client, ())


def _copilot_result(payload: dict[str, object]) -> None:
    """Copilot's `tool_result` (`result_type`, `text_result_for_llm`) as the
    `tool_response` the other clients send."""
    result = payload.get("tool_result")
    if isinstance(result, dict) and "tool_response" not in payload:
        payload["tool_response"] = {
            "output": result.get("text_result_for_llm"),
            "is_error": result.get("result_type") not in ("success", None)}


def user_message(line: str) -> str | None:
    """The JSON that shows `line` to the user (never the model), or None when the caller
    has no such field that was verified: the line then goes to stderr only."""
    return jsonc.dumps({"systemMessage": line}, ensure_ascii=False) \
        if _CALLER.client == "claude" else None


def note_lesson_call(payload: dict[str, object]) -> bool:
    """When this tool call recorded a lesson without an error, mark the session: its
    reminder is answered, and the entry files its output names are its own (a session
    is not told its own lesson as news). True when it did."""
    if not sessions.records_lesson(protocol.text_field(payload, "tool_name"),
                                   payload.get("tool_input")) or _failed(payload):
        return False
    common = quick_common_dir(protocol.text_field(payload, "cwd") or os.getcwd())
    if common is not None:
        output = jsonc.dumps(payload.get("tool_response"), ensure_ascii=False)
        sessions.note_lesson(os.path.join(common, "journal-mem"),
                             protocol.text_field(payload, "session_id"),
                             protocol.text_field(payload, "agent_id"),
                             sessions.entry_names(output))
    return True


def note_work(payload: dict[str, object]) -> None:
    """Mark the session as having done work (for the reminder) when this tool call edits
    files or commits, and as having recorded a lesson when it did (`jmem write`, the MCP
    tool) without an error; one state write per session at most."""
    if note_lesson_call(payload):
        return
    tool = protocol.text_field(payload, "tool_name")
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if tool not in EDIT_TOOLS and not (
            tool in SHELL_TOOLS and isinstance(command, str) and _commits(command)):
        return

    cwd = protocol.text_field(payload, "cwd") or os.getcwd()
    common = quick_common_dir(cwd)
    if common is None:
        return
    path = sessions.state_path(os.path.join(common, "journal-mem"),
                               protocol.text_field(payload, "session_id"),
                               protocol.text_field(payload, "agent_id"))
    state = sessions.load_state(path)
    if state is None or state.get("worked") is True:
        return
    # under the session's lock: a parallel call's hook delivering a change saves the state
    # it read under that lock, and would undo a mark written beside it
    with sessions.SessionLock(path, 3.0) as held:
        state = sessions.load_state(path) if held else None
        if state is not None and state.get("worked") is not True:
            state["worked"] = True
            sessions.save_state(path, state)


def _failed(payload: dict[str, object]) -> bool:
    """True when the tool's response says it failed (an exit code other than 0, an error
    flag, Gemini's and Qwen's "Exit Code: N" line); a response that says neither counts
    as success."""
    response = payload.get("tool_response")
    if not isinstance(response, dict):
        return False
    code = next((response[k] for k in ("exit_code", "exitCode", "returncode")
                 if k in response), 0)
    text = response.get("llmContent")
    shown = (sessions.regex().search(_EXIT, text)
             if isinstance(text, str) and "Exit Code:" in text else None)
    return code not in (0, None) or response.get("is_error") is True or \
        response.get("isError") is True or bool(response.get("error")) or \
        (shown is not None and shown.group(1) != "0")


_EXIT = r"(?m)^Exit Code: (-?\d+)"  # patterns compiled on first use (re's cache)


def _commits(command: str) -> bool:
    return "commit" in command and sessions.regex().search(COMMIT, command) is not None


COMMIT = r"\bgit\b.*\bcommit\b"  # as the reminder reads a Claude transcript (`remind`)
