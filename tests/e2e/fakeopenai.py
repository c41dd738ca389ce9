"""A fake OpenAI API on 127.0.0.1 for running the real Codex CLI without network.

It saves every request (path and body) and answers

* `POST …/responses` (the Responses API, `wire_api = "responses"`, the only
  one Codex 0.171 accepts: `wire_api = "chat"` is refused when the config loads)
  with an SSE stream: `response.created`, the output items, `response.completed`;
* `GET …/models` with an empty list; anything else with `{}`.

What it answers is plain text ("OK."), or — when the newest user text holds a
trigger set with `shell()` and the request offers a shell-like tool — one call
of that tool running the given command, once per conversation (the request
that already carries its output gets text).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# tool names Codex has offered for running a command, newest first
SHELL_TOOLS = ("exec_command", "shell_command", "shell", "local_shell")


class FakeOpenAI:
    """The server, its saved requests, and what it answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []  # {"path", "body"} of every POST
        self.paths: list[str] = []  # every request line's path, GETs too
        self.shells: dict[str, str] = {}  # trigger text -> command to run
        # trigger text -> (function, arguments, namespace) to call
        self.functions: dict[str, tuple[str, dict[str, Any], str]] = {}
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode(errors="replace")}
                with api.lock:
                    api.paths.append(self.path)
                    api.requests.append({"path": self.path, "body": body})
                if self.path.rstrip("/").endswith("/responses"):
                    return self._sse(responses_events(body, api.answer(body)))
                return self._json({})

            def do_GET(self) -> None:
                with api.lock:
                    api.paths.append(self.path)
                if "/models" in self.path:
                    return self._json({"object": "list", "data": [], "models": []})
                self._json({})

            def _json(self, data: object) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _sse(self, events: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event in events:
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                     .encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def shell(self, trigger: str, command: str) -> None:
        """Answer a user message holding `trigger` by running `command` in the shell tool."""
        self.shells[trigger] = command

    def call(self, trigger: str, name: str, arguments: dict[str, Any],
             namespace: str = "") -> None:
        """Answer `trigger` with a call of the function `name` (in `namespace`: Codex offers
        an MCP server's tools as one namespace tool) when the request offers it."""
        self.functions[trigger] = (name, arguments, namespace)

    def model_calls(self) -> list[dict[str, Any]]:
        """The bodies of the model requests (`POST …/responses`)."""
        return [r["body"] for r in self.requests if r["path"].rstrip("/").endswith("/responses")]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """{"text": …} or {"tool": name, "command": …, "call_id": …} for this request."""
        texts, done = conversation(body)
        names = tool_names(body)
        tool = next((t for t in SHELL_TOOLS if t in names), None)
        for trigger, command in self.shells.items():
            if tool and any(trigger in t for t in texts) and not done:
                return {"tool": tool, "command": command,
                        "call_id": f"call_{len(self.requests):04d}"}
        for trigger, (name, arguments, namespace) in self.functions.items():
            if (namespace or name) in names and any(trigger in t for t in texts) and not done:
                return {"tool": name, "arguments": arguments, "namespace": namespace,
                        "call_id": f"call_{len(self.requests):04d}"}
        return {"text": "OK."}


def tool_names(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.add(tool.get("name") or tool.get("type"))
    return names


def conversation(body: dict[str, Any]) -> tuple[list[str], bool]:
    """The texts of the newest user message, and whether a tool has answered since."""
    items = body.get("input")
    if isinstance(items, str):
        return [items], False
    texts: list[str] = []
    done = False
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind, role = item.get("type"), item.get("role")
        if role == "user" and kind in (None, "message"):
            content = item.get("content")
            parts = [content] if isinstance(content, str) else \
                [str(c.get("text", "")) for c in content or [] if isinstance(c, dict)]
            texts, done = parts, False
        elif kind in ("function_call_output", "custom_tool_call_output",
                      "local_shell_call_output"):
            done = True
    return texts, done


def shell_arguments(tool: str, command: str) -> dict[str, Any]:
    if tool == "exec_command":
        return {"cmd": command}
    if tool == "shell_command":
        return {"command": command}
    return {"command": ["bash", "-lc", command]}


def responses_events(body: dict[str, Any], answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The SSE events of one Responses API reply."""
    rid = "resp_fake"
    if "tool" in answer:
        arguments = answer["arguments"] if "arguments" in answer else \
            shell_arguments(answer["tool"], answer["command"])
        item: dict[str, Any] = {
            "type": "function_call", "id": "fc_" + answer["call_id"],
            "call_id": answer["call_id"], "name": answer["tool"],
            "arguments": json.dumps(arguments)}
        if answer.get("namespace"):
            item["namespace"] = answer["namespace"]
    else:
        item = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": answer["text"],
                             "annotations": []}]}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": rid, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**item, **({"content": []} if item["type"] == "message" else {})}}]
    if item["type"] == "message":
        events.append({"type": "response.output_text.delta", "item_id": item["id"],
                       "output_index": 0, "content_index": 0, "delta": answer["text"]})
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append({"type": "response.completed", "response": {
        "id": rid, "status": "completed", "model": body.get("model", "fake"),
        "output": [item],
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 15}}})
    return events
