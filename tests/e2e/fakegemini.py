"""A fake Gemini API (generativelanguage `v1beta`) on 127.0.0.1 for the real Gemini CLI.

Gemini CLI sends its model calls to `$GOOGLE_GEMINI_BASE_URL` when that is set
(auth type "gateway"). This server saves every request (path and body) and answers

* `POST …/models/<model>:streamGenerateContent?alt=sse` with SSE chunks,
* `POST …/models/<model>:generateContent` with one JSON body,
* `POST …/models/<model>:countTokens` with a small number,

with plain text ("OK."), or — when the newest user text holds a trigger set with
`shell()` and the request offers `run_shell_command` — one call of that tool,
once per conversation (a request that already carries its answer gets text).
Requests whose body asks for JSON output (the CLI's own side calls: the model
router's classifier, next-speaker checks) get one JSON object with the fields those
expect.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SHELL_TOOL = "run_shell_command"


class FakeGemini:
    """The server, its saved requests, and what it answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []  # {"path", "body"} of every POST
        self.paths: list[str] = []
        self.shells: dict[str, str | list[str]] = {}  # trigger text -> command(s)
        self.functions: dict[str, tuple[str, dict[str, Any]]] = {}  # trigger -> other call
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
                if ":countTokens" in self.path:
                    return self._json({"totalTokens": 10})
                reply = response(api.answer(body))
                if ":streamGenerateContent" in self.path:
                    return self._sse([reply])
                return self._json(reply)

            def do_GET(self) -> None:
                with api.lock:
                    api.paths.append(self.path)
                self._json({"models": []} if "/models" in self.path else {})

            def _json(self, data: object) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _sse(self, chunks: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGemini:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def shell(self, trigger: str, command: str) -> None:
        """Answer a user message holding `trigger` by running `command`."""
        self.shells[trigger] = command

    def parallel(self, trigger: str, *commands: str) -> None:
        """Answer `trigger` with one shell call per command, all in one model turn."""
        self.shells[trigger] = list(commands)

    def call(self, trigger: str, name: str, args: dict[str, Any]) -> None:
        """Answer `trigger` with a call of the function `name` (when the request offers
        it): an MCP server's tool, say."""
        self.functions[trigger] = (name, args)

    def model_calls(self) -> list[dict[str, Any]]:
        """The bodies of the agent's model requests (those that offer tools)."""
        return [r["body"] for r in self.requests
                if "GenerateContent" in r["path"] or "generateContent" in r["path"]]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json" or config.get("responseSchema") \
                or config.get("responseJsonSchema"):
            return {"text": json.dumps({"reasoning": "fake", "next_speaker": "user",
                                        "model_choice": "flash", "complexity_score": 10,
                                        "complexity_reasoning": "fake"})}
        texts, done = conversation(body)
        offered = {d.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
                   for d in t.get("functionDeclarations") or []}
        for trigger, command in self.shells.items():
            if SHELL_TOOL in offered and any(trigger in t for t in texts) and not done:
                commands = command if isinstance(command, list) else [command]
                return {"calls": [{"name": SHELL_TOOL, "args": {"command": c}}
                                  for c in commands]}
        for trigger, (name, args) in self.functions.items():
            if name in offered and any(trigger in t for t in texts) and not done:
                return {"calls": [{"name": name, "args": args}]}
        return {"text": "OK."}


def conversation(body: dict[str, Any]) -> tuple[list[str], bool]:
    """The texts of the newest user turn that is not a tool answer, and whether a
    function response came after it."""
    texts: list[str] = []
    done = False
    for turn in body.get("contents") or []:
        parts = [p for p in turn.get("parts") or [] if isinstance(p, dict)]
        if any("functionResponse" in p for p in parts):
            done = True
        elif turn.get("role") == "user":
            texts, done = [str(p.get("text", "")) for p in parts], False
    return texts, done


def response(answer: dict[str, Any]) -> dict[str, Any]:
    parts = [{"functionCall": call} for call in answer["calls"]] if "calls" in answer \
        else [{"text": answer["text"]}]
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "gemini-fake"}
