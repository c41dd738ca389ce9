"""A fake Anthropic Messages API on 127.0.0.1 for running the real Claude Code CLI.

It saves every request body and answers `POST /v1/messages` (SSE when the
request asks to stream) with text, or — when the newest user text holds a
trigger set by the test — with a `tool_use` of the `Agent` tool, which makes
the CLI start a subagent. `count_tokens` gets a small number.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeApi:
    """The server, its saved requests, and what it answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        # trigger text in the newest user message -> (tool name, tool input) to call
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
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
                answer = api.answer(body)
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

    def delegate(self, trigger: str, agent: str) -> None:
        """Answer a user message holding `trigger` by starting subagent `agent`."""
        self.calls[trigger] = ("Agent", {"description": "check memory",
                                         "prompt": "Say what you remember.",
                                         "subagent_type": agent})

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The content blocks of the reply: the tool call set for a trigger in the newest
        user text (when the request offers that tool), else plain text."""
        talk = [m for m in body.get("messages", []) if m.get("role") in ("user", "assistant")]
        last = talk[-1] if talk and talk[-1].get("role") == "user" else {}
        content = last.get("content", "")
        texts = [content] if isinstance(content, str) else \
            [str(b.get("text", "")) for b in content if isinstance(b, dict)]
        answered = json.dumps(talk[-2].get("content", "")) if len(talk) > 1 else ""
        tools = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
        for trigger, (tool, args) in self.calls.items():
            if any(trigger in t for t in texts) and tool in tools \
                    and f'"name": "{tool}"' not in answered:
                return [{"type": "tool_use", "id": f"toolu_{len(self.requests):04d}",
                         "name": tool, "input": args}]
        return [{"type": "text", "text": "OK."}]


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
