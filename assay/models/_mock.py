"""A scripted chat transport for tests and offline examples (`mock/<anything>`).

It answers from a script (responses, texts or exceptions, in order) and then echoes the
last user message; it counts calls and the peak number in flight. Exceptions in the
script are classified exactly as litellm's are, so the `Model` layers (retries,
Retry-After, the concurrency bound, the cache) can be tested without a server.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from typing import Any

from assay.core.outcomes import Usage
from assay.models._cache import cache_key
from assay.models._config import ModelConfig
from assay.models._retry import classify
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, RawResponse

Scripted = RawResponse | str | Exception


class MockHTTPError(Exception):
    """An HTTP error as a provider SDK raises it: a status code and response headers."""

    def __init__(self, status_code: int, *, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.headers = {"retry-after": str(retry_after)} if retry_after is not None else {}


def _reply(text: str, request: ChatRequest) -> RawResponse:
    prompt = sum(len(m.content.split()) for m in request.messages)
    completion = len(text.split())
    return RawResponse(
        content=text,
        finish_reason="stop",
        model_returned="mock",
        usage=Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            cost_usd=0.0,
        ),
    )


class MockTransport:
    """Answers chat requests from `script`, then by echoing; never touches a network."""

    response_type = RawResponse

    def __init__(
        self,
        config: ModelConfig | None = None,
        *,
        script: Iterable[Scripted] = (),
        delay_s: float = 0.0,
    ) -> None:
        self.config = config or ModelConfig(model="mock/model")
        self.script: deque[Scripted] = deque(script)
        self.delay_s = delay_s
        self.calls = 0
        self.requests: list[ChatRequest] = []
        self.in_flight = 0
        self.peak_in_flight = 0

    @property
    def max_concurrency(self) -> int:
        return self.config.max_concurrency

    def describe(self) -> dict[str, Any]:
        return {"kind": "mock", "model": self.config.model, "max_concurrency": self.max_concurrency}

    def cache_key(self, request: ChatRequest) -> str:
        return cache_key(self.config, request, structured_mode="off")

    async def send(self, request: ChatRequest) -> RawResponse:
        self.calls += 1
        self.requests.append(request)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            item: Scripted = self.script.popleft() if self.script else request.messages[-1].content
        finally:
            self.in_flight -= 1
        if isinstance(item, TransportError):
            raise item
        if isinstance(item, Exception):
            raise classify(item) from item
        return item if isinstance(item, RawResponse) else _reply(item, request)
