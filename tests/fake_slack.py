"""A fake Slack on 127.0.0.1 for tests: incoming webhooks and the Web API's chat.postMessage.

It records every request (path, headers, JSON body) and answers from a scriptable queue, so a
test can say "429 with Retry-After: 1, then 200", "500, then 200", "drop the connection", or
"fail everything until recover()". It also enforces the Block Kit limits Slack enforces
(50 blocks, 3000 characters per section text, 150 per header), answering `invalid_blocks`
like Slack does, so an oversized digest fails here as it would in production.

In-process:

    with FakeSlack() as slack:
        slack.script(Reply(429, headers={"Retry-After": "1"}), Reply(200))
        WebhookClient(slack.webhook_url).send(text="hi")
        slack.requests[-1].body["text"]

As a separate process (e.g. for a Prefect worker test), it prints its base URL on the first
line of stdout and appends one JSON line per request to --record:

    python tests/fake_slack.py --port 0 --record /tmp/slack.jsonl

and is controlled over HTTP: POST /_fake/script with a JSON list of replies
(`[{"status": 429, "headers": {"Retry-After": "1"}}, {"drop": true}]`), POST /_fake/default
with one reply (the answer when the queue is empty; `{"status": 200}` to recover),
GET /_fake/requests for everything recorded.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

WEBHOOK_PATH = "/services/T000FAKE/B000FAKE/XXXXfakeWEBHOOKsecret1234"
API_PREFIX = "/api/"
CONTROL_PREFIX = "/_fake/"
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
SHUTDOWN_POLL_SECONDS = 0.02     # serve_forever's default 0.5 s poll made every stop() wait that long


@dataclass
class Reply:
    """One scripted answer. `drop=True` closes the connection without any response."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None          # None: Slack's normal body for the path and status
    drop: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Reply":
        return cls(status=int(data.get("status", 200)), headers=dict(data.get("headers", {})),
                   body=data.get("body"), drop=bool(data.get("drop", False)))


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any                        # decoded JSON (or form fields), else the raw text
    at: float
    status: int                      # HTTP status the fake answered (0 = connection dropped)
    accepted: bool = False           # the message was posted (what Slack would show in the channel)


def block_problems(blocks: Any) -> list[str]:
    """The Block Kit limits Slack rejects a message for (empty list: acceptable)."""
    if blocks is None:
        return []
    if not isinstance(blocks, list):
        return ["blocks is not a list"]
    problems = []
    if len(blocks) > MAX_BLOCKS:
        problems.append(f"{len(blocks)} blocks > {MAX_BLOCKS}")
    for i, block in enumerate(blocks):
        text = (block.get("text") or {}).get("text", "") if isinstance(block, dict) else ""
        if block.get("type") == "section" and len(text) > MAX_SECTION_TEXT:
            problems.append(f"block {i}: section text {len(text)} > {MAX_SECTION_TEXT}")
        if block.get("type") == "header" and len(text) > MAX_HEADER_TEXT:
            problems.append(f"block {i}: header text {len(text)} > {MAX_HEADER_TEXT}")
    return problems


class FakeSlack:
    """The server; use as a context manager or call start()/stop()."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, record_path: str | None = None):
        self.requests: list[Recorded] = []
        self._queue: list[Reply] = []
        self._default = Reply(200)
        self._lock = threading.Lock()
        self._record_path = record_path
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- control ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def webhook_url(self) -> str:
        return self.base_url + WEBHOOK_PATH

    @property
    def api_url(self) -> str:
        """Base URL for `WebClient(base_url=…)` (ends with /api/)."""
        return self.base_url + API_PREFIX

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order, then the default."""
        with self._lock:
            self._queue.extend(replies)

    def set_default(self, reply: Reply) -> None:
        """The answer once the queue is empty (e.g. Reply(503) for an outage)."""
        with self._lock:
            self._default = reply

    def outage(self, status: int = 503) -> None:
        self.set_default(Reply(status))

    def recover(self) -> None:
        self.set_default(Reply(200))

    def messages(self) -> list[dict[str, Any]]:
        """Bodies of the requests that were accepted (status 200), in order."""
        return [r.body for r in self.requests if r.accepted]

    def start(self) -> "FakeSlack":
        self._thread = threading.Thread(target=self._server.serve_forever, args=(SHUTDOWN_POLL_SECONDS,),
                                        name="fake-slack", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeSlack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- serving -------------------------------------------------------------------------------
    def _next_reply(self) -> Reply:
        with self._lock:
            return self._queue.pop(0) if self._queue else self._default

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)
            if self._record_path:
                with open(self._record_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(asdict(rec)) + "\n")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None,
                      content_type: str = "text/plain") -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == CONTROL_PREFIX + "requests":
                    with fake._lock:
                        data = [asdict(r) for r in fake.requests]
                    self._send(200, json.dumps(data), content_type="application/json")
                else:
                    self._send(404, "not_found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                if self.path.startswith(CONTROL_PREFIX):
                    self._control(raw)
                    return
                body = _decode(raw, self.headers.get("Content-Type", ""))
                webhook = self.path.startswith("/services/")
                api = self.path.startswith(API_PREFIX)
                if not (webhook or api):
                    self._send(404, "not_found")
                    return
                reply = fake._next_reply()
                if reply.drop:
                    fake._record(Recorded(path=self.path, headers=dict(self.headers.items()), body=body,
                                          at=time.time(), status=0))
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, accepted, text, headers, content_type = (_webhook_answer if webhook else _api_answer)(
                    reply, body, self.headers.get("Authorization") or "")
                fake._record(Recorded(path=self.path, headers=dict(self.headers.items()), body=body,
                                      at=time.time(), status=status, accepted=accepted))
                self._send(status, text, headers, content_type)

            def _control(self, raw: str) -> None:
                data = json.loads(raw or "null")
                if self.path == CONTROL_PREFIX + "script":
                    fake.script(*(Reply.from_json(d) for d in data))
                elif self.path == CONTROL_PREFIX + "default":
                    fake.set_default(Reply.from_json(data))
                else:
                    self._send(404, "not_found")
                    return
                self._send(200, "ok")

        return Handler


_Answer = tuple[int, bool, str, dict[str, str], str]   # status, accepted, body, headers, content type


def _webhook_answer(reply: Reply, body: Any, auth: str) -> _Answer:
    """Incoming webhooks answer with a status and a short text body ("ok", "invalid_blocks")."""
    if reply.status != 200:
        default = {429: "rate_limited", 404: "no_service"}.get(reply.status, "internal_error")
        return reply.status, False, reply.body or default, reply.headers, "text/plain"
    problem = _message_problem(body)
    if problem:
        return 400, False, problem, {}, "text/plain"
    return 200, True, reply.body or "ok", reply.headers, "text/plain"


def _api_answer(reply: Reply, body: Any, auth: str) -> _Answer:
    """The Web API answers JSON {"ok": …}; logical errors come with HTTP 200, as Slack does."""
    if reply.status != 200:
        default = {"ok": False, "error": "ratelimited" if reply.status == 429 else "fatal_error"}
        return reply.status, False, reply.body or json.dumps(default), reply.headers, "application/json"
    if not auth.startswith("Bearer "):
        error: str | None = "not_authed"
    elif not isinstance(body, dict) or not body.get("channel"):
        error = "channel_not_found"
    else:
        error = _message_problem(body)
    if error:
        return 200, False, json.dumps({"ok": False, "error": error}), {}, "application/json"
    data = {"ok": True, "channel": "C0FAKE", "ts": f"{time.time():.6f}", "message": {"text": body.get("text")}}
    return 200, True, reply.body or json.dumps(data), reply.headers, "application/json"


def _decode(raw: str, content_type: str) -> Any:
    if "json" in content_type:
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    if "x-www-form-urlencoded" in content_type:
        return {k: v[0] if len(v) == 1 else v for k, v in parse_qs(raw).items()}
    return raw


def _message_problem(body: Any) -> str | None:
    """Slack's error code for an unacceptable message body, else None."""
    if not isinstance(body, dict):
        return "invalid_payload"
    if not body.get("text") and not body.get("blocks"):
        return "no_text"
    return "invalid_blocks" if block_problems(body.get("blocks")) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake Slack (webhook + chat.postMessage) on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = an ephemeral port")
    parser.add_argument("--record", help="append one JSON line per request to this file")
    args = parser.parse_args(argv)
    fake = FakeSlack(port=args.port, record_path=args.record)
    print(fake.base_url, flush=True)
    try:
        fake._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
