"""The fake server's files and batches endpoints (OpenAI Batch API), for `mode = "batch"`.

Each line of an uploaded batch is answered as the chat endpoint would answer that body
(scripts, responder, default), so a batched request gets the same answer as an online
one. Knobs a test turns: `hold` keeps batches in progress (to kill a client while it
polls), `polls_to_finish` how many polls a batch stays in progress, `expire_after` how
many lines are answered before a batch expires, and `fail(endpoint, behaviors)` queues
HTTP failures for `upload`, `create`, `retrieve` or `content`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from assay.testing._behaviors import Behavior, _error_json, _json_response, render_response

ENDPOINTS = ("upload", "create", "retrieve", "content", "list")


class FakeBatches:
    """Files and batches held in memory; counters for tests (`created`, `uploads`, `polls`)."""

    def __init__(self, choose: Callable[[dict[str, Any]], Behavior]) -> None:
        self._choose = choose
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.bodies: list[dict[str, Any]] = []  # request bodies answered through batches
        self.created = self.uploads = self.polls = 0
        self.hold = False
        self.polls_to_finish = 1
        self.expire_after: int | None = None
        self._failures: dict[str, deque[Behavior]] = {name: deque() for name in ENDPOINTS}

    def fail(self, endpoint: str, behaviors: Sequence[Behavior]) -> None:
        """Answer the next calls to `endpoint` with these behaviours (errors), in order."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {ENDPOINTS}, got {endpoint!r}")
        with self._lock:
            self._failures[endpoint].extend(behaviors)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{file_id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve)
        app.router.add_get("/v1/batches", self._list)

    def _failure(self, endpoint: str) -> web.Response | None:
        with self._lock:
            queue = self._failures[endpoint]
            behavior = queue.popleft() if queue else None
        return render_response(behavior, {}, self._ids) if behavior is not None else None

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-fake{next(self._ids):06d}"

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        failed = self._failure("upload")
        if failed is not None:
            return failed
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return _json_response(400, _error_json(400, "expected purpose=batch and a file"))
        file_id = self._new_id("file")
        with self._lock:
            self.files[file_id] = upload.file.read()
            self.uploads += 1
        info = {"id": file_id, "object": "file", "purpose": "batch", "filename": upload.filename}
        return _json_response(200, json.dumps(info))

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        failed = self._failure("create")
        if failed is not None:
            return failed
        file_id = body.get("input_file_id")
        if file_id not in self.files or body.get("endpoint") != "/v1/chat/completions":
            return _json_response(400, _error_json(400, f"bad batch request {body!r}"))
        total = sum(1 for line in self.files[file_id].splitlines() if line.strip())
        batch = {
            "id": self._new_id("batch"),
            "object": "batch",
            "endpoint": body["endpoint"],
            "input_file_id": file_id,
            "completion_window": body.get("completion_window"),
            "status": "validating",
            "created_at": int(time.time()),
            "output_file_id": None,
            "error_file_id": None,
            "request_counts": {"total": total, "completed": 0, "failed": 0},
            "_polls": 0,
        }
        with self._lock:
            self.batches[batch["id"]] = batch
            self.created += 1
        return _json_response(200, json.dumps(_public(batch)))

    async def _list(self, request: web.Request) -> web.Response:
        """GET /v1/batches: newest first, `limit` a page, `after` a batch id (as OpenAI)."""
        failed = self._failure("list")
        if failed is not None:
            return failed
        limit = int(request.query.get("limit", "20"))
        with self._lock:
            newest = [_public(b) for b in reversed(list(self.batches.values()))]
        after = request.query.get("after")
        if after is not None:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1 :] if after in ids else []
        page = {"object": "list", "data": newest[:limit], "has_more": len(newest) > limit}
        return _json_response(200, json.dumps(page))

    async def _retrieve(self, request: web.Request) -> web.Response:
        failed = self._failure("retrieve")
        if failed is not None:
            return failed
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _json_response(404, _error_json(404, "No such batch."))
        with self._lock:
            self.polls += 1
            batch["_polls"] += 1
            if batch["status"] in ("validating", "in_progress"):
                batch["status"] = "in_progress"
                if not self.hold and batch["_polls"] >= self.polls_to_finish:
                    self._finish(batch)
        return _json_response(200, json.dumps(_public(batch)))

    async def _content(self, request: web.Request) -> web.Response:
        failed = self._failure("content")
        if failed is not None:
            return failed
        content = self.files.get(request.match_info["file_id"])
        if content is None:
            return _json_response(404, _error_json(404, "No such file."))
        return web.Response(status=200, body=content, content_type="application/octet-stream")

    def _finish(self, batch: dict[str, Any]) -> None:
        """Answer the lines (all, or the first `expire_after`) into output/error files."""
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].splitlines() if x]
        answered = lines if self.expire_after is None else lines[: self.expire_after]
        output: list[bytes] = []
        errors: list[bytes] = []
        for line in answered:
            self.bodies.append(line["body"])
            response = render_response(self._choose(line["body"]), line["body"], self._ids)
            text = response.text or ""
            result = {
                "id": self._new_id("batch_req"),
                "custom_id": line["custom_id"],
                "response": {"status_code": response.status, "body": _parsed(text)},
                "error": None,
            }
            (output if response.status == 200 else errors).append(json.dumps(result).encode())
        for name, rows in (("output_file_id", output), ("error_file_id", errors)):
            if rows:
                batch[name] = self._new_id("file")
                self.files[batch[name]] = b"\n".join(rows) + b"\n"
        batch["status"] = "completed" if len(answered) == len(lines) else "expired"
        batch["request_counts"].update(completed=len(output), failed=len(errors))


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}
