"""A fake Anthropic Messages API on 127.0.0.1 for running the real Claude Code CLI.

It saves every request body and answers `POST /v1/messages` (SSE when the
request asks to stream) with text, or — when the newest user text holds a
trigger set by the test — with the `tool_use` blocks scripted for it: one call
(an `Agent` call makes the CLI start a subagent), several in one message
(parallel calls, which the CLI runs as one batch), a background or a fork
subagent. A request whose newest user text holds a marker set with `hold` is
answered only once the test's condition holds (a subagent that outlives its
parent's turn). A function set with `before` runs once, before the first request
whose newest user text holds its marker is answered (a change made mid-turn,
after the prompt's hooks ran). A call set with `on_result` answers the first request
whose newest tool results hold its marker (a call that needs another first: ToolSearch,
then the tool it loaded). `count_tokens` gets a small number.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Call = tuple[str, dict[str, Any]]  # a tool's name and its input


class FakeApi:
    """The server, its saved requests, and what it answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        # trigger text in the newest user message -> the (tool name, tool input) to call,
        # or a list of them: several tool_use blocks in one assistant message
        self.calls: dict[str, Call | list[Call]] = {}
        # marker in the newest user text -> (condition to wait for, at most seconds)
        self.holds: dict[str, tuple[Callable[[], bool], float]] = {}
        # marker in the newest user text -> what to do once before answering it
        self.befores: dict[str, Callable[[], None]] = {}
        # marker in the newest tool results -> the call to answer them with (a chain of
        # calls: ToolSearch, then the tool it loaded)
        self.on_result: dict[str, Call] = {}
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                if "count_tokens" in self.path:
                    return self._json({"input_tokens": 100})
                with api.lock:
                    api.requests.append(body)
                    number = len(api.requests)
                with api.lock:
                    todo = [api.befores.pop(m) for m in list(api.befores)
                            if m in newest_user_text(body)]
                for run in todo:
                    run()
                answer = api.answer(body, number)
                for marker, (until, seconds) in api.holds.items():
                    if marker in newest_user_text(body):
                        deadline = time.monotonic() + seconds
                        while not until() and time.monotonic() < deadline:
                            time.sleep(0.05)
                if body.get("stream"):
                    return self._sse(body, answer)
                return self._json(message(body, answer))

            def do_GET(self) -> None:
                self._json({})

            def do_HEAD(self) -> None:
                self._json({})

            def _json(self, data: object) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _sse(self, body: dict[str, Any], blocks: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for event in events(body, blocks):
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                     .encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def delegate(self, trigger: str, agent: str, prompt: str = "Say what you remember.",
                 background: bool | None = None) -> None:
        """Answer a user message holding `trigger` by starting subagent `agent`; with
        `background`, say so in `run_in_background` (2.1.332: background by default)."""
        args: dict[str, Any] = {"description": "check memory", "prompt": prompt,
                                "subagent_type": agent}
        if background is not None:
            args["run_in_background"] = background
        self.calls[trigger] = ("Agent", args)

    def fork(self, trigger: str, prompt: str = "Say what you remember.") -> None:
        """Answer `trigger` by forking the session: `subagent_type: "fork"`, a subagent that
        inherits the whole conversation (on by default in 2.1.332)."""
        self.calls[trigger] = ("Agent", {"description": "fork off", "prompt": prompt,
                                         "subagent_type": "fork"})

    def parallel(self, trigger: str, *calls: Call) -> None:
        """Answer `trigger` with all of `calls` in one assistant message (one tool batch)."""
        self.calls[trigger] = list(calls)

    def hold(self, marker: str, until: Callable[[], bool] | None = None,
             seconds: float = 30.0) -> None:
        """Answer a request whose newest user text holds `marker` only once `until()` is
        true (checked every 50 ms), or after `seconds` at most."""
        self.holds[marker] = (until or (lambda: False), seconds)

    def before(self, marker: str, run: Callable[[], None]) -> None:
        """Call `run()` once, before answering the first request whose newest user text
        holds `marker`."""
        self.befores[marker] = run

    def answer(self, body: dict[str, Any], number: int = 0) -> list[dict[str, Any]]:
        """The content blocks of the reply: the tool calls set for a trigger in the newest
        user text (when the request offers those tools and the assistant message before it
        is not already that answer), else plain text."""
        talk = [m for m in body.get("messages", []) if m.get("role") in ("user", "assistant")]
        text = newest_user_text(body)
        answered = json.dumps(talk[-2].get("content", "")) if len(talk) > 1 else ""
        tools = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
        for trigger, script in self.calls.items():
            calls = script if isinstance(script, list) else [script]
            key = "toolu_" + hashlib.sha1(trigger.encode()).hexdigest()[:8]
            if trigger in text and all(tool in tools for tool, _ in calls) \
                    and key not in answered:
                return [{"type": "tool_use", "id": f"{key}_{number:04d}_{i}", "name": tool,
                         "input": args} for i, (tool, args) in enumerate(calls)]
        results = newest_results(body)
        for marker, (tool, args) in self.on_result.items():
            key = "toolu_" + hashlib.sha1(f"result:{marker}".encode()).hexdigest()[:8]
            if marker in results and tool in tools and key not in answered:
                return [{"type": "tool_use", "id": f"{key}_{number:04d}_0", "name": tool,
                         "input": args}]
        return [{"type": "text", "text": "OK."}]


def newest_user_text(body: dict[str, Any]) -> str:
    """The text blocks of the request's newest message when a user wrote it (tool results
    and system messages are not user text), joined."""
    talk = [m for m in body.get("messages", []) if m.get("role") in ("user", "assistant")]
    last = talk[-1] if talk and talk[-1].get("role") == "user" else {}
    content = last.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))


def newest_results(body: dict[str, Any]) -> str:
    """The tool results of the request's newest message, as JSON text ("" when it holds
    none)."""
    talk = [m for m in body.get("messages", []) if m.get("role") in ("user", "assistant")]
    content = talk[-1].get("content", "") if talk and talk[-1].get("role") == "user" else ""
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(content, list) else []
    return json.dumps(blocks, ensure_ascii=False) if blocks else ""


def message(body: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {"id": "msg_fake", "type": "message", "role": "assistant",
            "model": body.get("model", "claude"), "content": blocks, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def events(body: dict[str, Any], blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The SSE events of one streamed reply."""
    whole = message(body, blocks)
    out: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **whole, "content": [], "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            out.append({"type": "content_block_start", "index": i,
                        "content_block": {"type": "text", "text": ""}})
            out.append({"type": "content_block_delta", "index": i,
                        "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            out.append({"type": "content_block_start", "index": i,
                        "content_block": {**block, "input": {}}})
            out.append({"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta",
                                  "partial_json": json.dumps(block["input"])}})
        out.append({"type": "content_block_stop", "index": i})
    out.append({"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"],
                                                   "stop_sequence": None},
                "usage": {"output_tokens": 5}})
    out.append({"type": "message_stop"})
    return out
