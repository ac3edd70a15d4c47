"""A client for OpenAI-style batch jobs (`mode = "batch"`): upload a JSONL of chat
requests to `/files`, create a batch on `/batches`, poll it, download its output and
error files.

It rides on the lean transport (`OpenAIHTTPTransport`): the same pooled aiohttp session,
headers and key, the same request bodies (so a batched request is the request an online
run sends) and the same typed errors; upload, create, poll and download are retried by
the same `Retrier` as chat requests (429 with Retry-After, 5xx, connection drops).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core.outcomes import Usage
from assay.errors import RunError, first_problem
from assay.models._config import ModelConfig
from assay.models._hosted import litellm_module
from assay.models._layers import Retrier
from assay.models._openai_errors import (
    bad_body_error,
    connection_error,
    media_type,
    not_json_error,
    status_error,
    timeout_error,
)
from assay.models._openai_http import OPENAI_API_BASE, OpenAIHTTPTransport
from assay.models._retry import connection_failure
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, RawResponse

CHAT_ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
FINISHED = frozenset({"completed", "expired", "failed", "cancelled"})


FIND_PAGES = 20
"""Pages of 100 batches `find` reads back (the newest 2,000) before it gives up."""


class RequestCounts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    total: int = 0
    completed: int = 0
    failed: int = 0


class BatchInfo(BaseModel):
    """The fields of a batch object assay reads (`GET /batches/{id}`)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    status: str
    input_file_id: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    request_counts: RequestCounts = Field(default_factory=RequestCounts)

    @property
    def finished(self) -> bool:
        """No more answers will come: completed, expired, failed or cancelled."""
        return self.status in FINISHED


class LineResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status_code: int
    body: Any = None


class ResultLine(BaseModel):
    """One line of a batch's output or error file."""

    model_config = ConfigDict(extra="ignore")

    custom_id: str
    response: LineResponse | None = None
    error: Any = None


def result_lines(content: bytes, where: str) -> Iterator[ResultLine]:
    """The lines of a downloaded output/error file; a line that is not one is a run error
    naming the file and line (the provider broke its format: nothing to retry)."""
    for number, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield ResultLine.model_validate_json(line)
        except ValidationError as exc:
            problem = first_problem(exc)
            raise RunError(
                f"not a batch result line: {problem.message}",
                file=where,
                line=number,
                field=problem.field,
            ) from None


class BatchPricing:
    """Batch prices from litellm's cost map (`input/output_cost_per_token_batches`); None
    for a model the map has no batch price for (the run then notes it once)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._rates: tuple[float, float] | None | bool = False  # False: not looked up yet

    def rates(self) -> tuple[float, float] | None:
        if self._rates is False:
            self._rates = _batch_rates(self.model)
        return self._rates if isinstance(self._rates, tuple) else None

    def cost(self, usage: Usage) -> float | None:
        rates = self.rates()
        if rates is None:
            return None
        return usage.prompt_tokens * rates[0] + usage.completion_tokens * rates[1]


def _batch_rates(model: str) -> tuple[float, float] | None:
    try:
        info = litellm_module().get_model_info(model=model)
    except Exception:
        return None
    prompt, completion = (
        info.get("input_cost_per_token_batches"),
        info.get("output_cost_per_token_batches"),
    )
    if prompt is None or completion is None:
        return None
    return float(prompt), float(completion)


class OpenAIBatchAPI:
    """The files and batches endpoints next to one model's chat endpoint."""

    def __init__(self, config: ModelConfig) -> None:
        self.http = OpenAIHTTPTransport(config)
        self.base = (config.api_base or OPENAI_API_BASE).rstrip("/")
        self.retrier = Retrier(config.retry)
        self.pricing = BatchPricing(config.model)

    @property
    def config(self) -> ModelConfig:
        return self.http.config

    def request_line(self, custom_id: str, request: ChatRequest) -> bytes:
        """One JSONL line: exactly the body an online request sends."""
        line = {
            "custom_id": custom_id,
            "method": "POST",
            "url": CHAT_ENDPOINT,
            "body": self.http.body(request),
        }
        return json.dumps(line, ensure_ascii=False).encode() + b"\n"

    async def upload(self, content: bytes) -> str:
        """POST /files (purpose "batch"): the uploaded file's id."""
        data = await self._call("POST", "/files", form=content)
        return str(_object(data, "/files").get("id"))

    async def create(self, input_file_id: str) -> BatchInfo:
        body = {
            "input_file_id": input_file_id,
            "endpoint": CHAT_ENDPOINT,
            "completion_window": COMPLETION_WINDOW,
        }
        return _batch(await self._call("POST", "/batches", body=body))

    async def find(self, input_file_id: str) -> BatchInfo | None:
        """The batch already made from `input_file_id` (GET /batches, newest first, a
        page at a time), or None: a run killed between creating a batch and recording its
        id adopts that batch instead of paying for a second one."""
        after: str | None = None
        for _ in range(FIND_PAGES):
            path = "/batches?limit=100" + (f"&after={after}" if after else "")
            page = _object(await self._call("GET", path), "/batches")
            found = [b for b in page.get("data") or [] if isinstance(b, dict)]
            for batch in found:
                if batch.get("input_file_id") == input_file_id:
                    return _batch(json.dumps(batch).encode())
            if not page.get("has_more") or not found:
                return None
            after = str(found[-1].get("id"))
        return None

    async def retrieve(self, batch_id: str) -> BatchInfo:
        return _batch(await self._call("GET", f"/batches/{batch_id}"))

    async def content(self, file_id: str) -> bytes:
        return await self._call("GET", f"/files/{file_id}/content")

    def to_raw(self, line: ResultLine) -> RawResponse:
        """A 200 line's body as the response an online request gets, priced at batch rates;
        any other line raises the `TransportError` the online request would have."""
        response = line.response
        if response is None or response.status_code >= 400 or line.error:
            raise _line_error(line)
        raw = self.http.to_raw(json.dumps(response.body).encode())
        raw.usage.cost_usd = self.pricing.cost(raw.usage)
        return raw

    async def _call(
        self, method: str, path: str, *, body: Any = None, form: bytes | None = None
    ) -> bytes:
        """One endpoint call, retried like a chat request; a final failure stops the run
        with one line (nothing was recorded, so the same command resumes)."""
        try:
            payload, _ = await self.retrier.call(lambda: self._send(method, path, body, form))
        except TransportError as exc:
            raise RunError(f"batch {method} {self.base}{path}: {exc.render()}") from None
        return payload

    async def _send(self, method: str, path: str, body: Any, form: bytes | None) -> bytes:
        session = await self.http.session()
        kwargs: dict[str, Any] = {}
        if form is not None:
            writer = aiohttp.FormData()
            writer.add_field("purpose", "batch")
            writer.add_field("file", form, filename="batch.jsonl", content_type="application/jsonl")
            payload = writer()
            kwargs = {"data": payload, "headers": {"Content-Type": payload.content_type}}
        elif body is not None:
            kwargs = {"data": json.dumps(body).encode()}
        started = time.monotonic()
        try:
            async with session.request(method, self.base + path, **kwargs) as response:
                data = await response.read()
                status, headers = response.status, response.headers
        except TimeoutError:
            raise timeout_error(self.config.timeout_s, time.monotonic() - started) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise connection_error(connection_failure(exc, self.config.api_base)) from exc
        if status >= 400:
            raise status_error(status, data, headers)
        media = media_type(headers)
        if media == "text/html" and not data.lstrip().startswith((b"{", b"[")):
            raise not_json_error(media, data)  # never a batch object nor a results file
        return data

    async def aclose(self) -> None:
        await self.http.aclose()


def _object(data: bytes, path: str) -> dict[str, Any]:
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise RunError(f"batch endpoint {path} answered something that is not a JSON object")
    return parsed


def _batch(data: bytes) -> BatchInfo:
    try:
        return BatchInfo.model_validate_json(data)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise RunError(f"not a batch object: {problem.message}", field=problem.field) from None


def _line_error(line: ResultLine) -> TransportError:
    """What a failed line says, typed as the online request's failure would be."""
    response = line.response
    if response is not None and response.status_code >= 400:
        return status_error(response.status_code, json.dumps(response.body).encode(), {})
    error = line.error if isinstance(line.error, dict) else {"message": str(line.error)}
    return bad_body_error(str(error.get("message") or "the batch line has no response"))


__all__ = [
    "FINISHED",
    "BatchInfo",
    "BatchPricing",
    "OpenAIBatchAPI",
    "ResultLine",
    "result_lines",
]
