"""The lean transport (`transport = "openai"`): OpenAI-compatible chat completions over
one pooled aiohttp session per target and event loop.

Local servers (vLLM, Ollama, llama.cpp) answer in milliseconds, and then litellm's own
client work per request is the bottleneck. This path sends the same body litellm sends,
reads the same fields back, and fails with the same typed errors; what it shares with the
litellm path (key, secrets, structured output, preflight, cache key) lives in
`HostedEndpoint`.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from assay._collector import HOSTED_REQUESTS
from assay.core.outcomes import Usage
from assay.errors import ModelConfigError
from assay.models._config import ModelConfig
from assay.models._cost_map import openai_cost, supports_response_schema, uses_local_map
from assay.models._hosted import HostedEndpoint, litellm_module
from assay.models._logprobs import token_logprobs
from assay.models._openai_errors import (
    bad_body_error,
    connection_error,
    media_type,
    not_json_error,
    status_error,
    timeout_error,
)
from assay.models._ratelimit_headers import note_headers
from assay.models._retry import connection_failure
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, RawResponse

OPENAI_API_BASE = "https://api.openai.com/v1"
# extra_body keys litellm does not send as body fields: it sends `headers` and
# `extra_headers` as HTTP headers, merges `extra_body` into the body, and keeps `metadata`
# for its own callbacks
_HEADER_FIELDS = ("headers", "extra_headers")  # in this order: extra_headers win
_NOT_BODY_FIELDS = frozenset({*_HEADER_FIELDS, "extra_body", "metadata"})


def chat_url(config: ModelConfig) -> str:
    """POST target: `{api_base}/chat/completions` (a query in api_base kept after the
    path, e.g. `?api-version=`), OpenAI's own API by default. User info in api_base is
    dropped: the key travels as the Bearer header, and aiohttp refuses both at once."""
    parts = urlsplit(config.api_base or OPENAI_API_BASE)
    path = parts.path.rstrip("/") + "/chat/completions"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, path, parts.query, ""))


async def _close_with_loop(session: aiohttp.ClientSession) -> AsyncIterator[None]:
    """Held open until its loop finalises async generators (`asyncio.run` does, at its
    end): then the session closes on the loop it was made for, with no warning."""
    try:
        yield
    finally:
        await session.close()


class _Pricing:
    """The price of one answer, the figure the litellm path records: from litellm's
    bundled cost map read directly (`assay.models._cost_map`, no litellm import), or from
    litellm itself when the user asked for its remote map. None for a model the map does
    not know (local servers' models never are); that answer is remembered."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._unpriced = False

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self._unpriced:
            return None
        found = (
            openai_cost(self.model, prompt_tokens, completion_tokens)
            if uses_local_map()
            else self._litellm_cost(prompt_tokens, completion_tokens)
        )
        self._unpriced = found is None
        return found

    def _litellm_cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        try:
            prompt, completion = litellm_module().cost_per_token(
                model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
        except Exception:
            return None
        return float(prompt) + float(completion)


class OpenAIHTTPTransport(HostedEndpoint):
    """One OpenAI-compatible endpoint reached directly over HTTP (provider `openai`)."""

    wire = "openai"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.url = chat_url(config)
        self.model_name = config.model.split("/", 1)[1]
        self.pricing = _Pricing(config.model)
        # per event loop: a session (and its connections) belongs to the loop it was made on
        self._sessions: dict[asyncio.AbstractEventLoop, tuple[aiohttp.ClientSession, Any]] = {}
        self._headers: dict[str, str] | None = None

    def structured_mode(self) -> str:
        """'auto' resolved from the bundled cost map, as litellm resolves it, without
        importing litellm (unless the user asked litellm for its remote map)."""
        auto = self.config.structured_output == "auto"
        if self._structured is None and auto and uses_local_map():
            ok = supports_response_schema(self.config.model)
            self._structured = "json_schema" if ok else "off"
        return super().structured_mode()

    def preflight(self) -> None:
        """As the litellm path checks it; OpenAI's own API needs `OPENAI_API_KEY`, which
        is what `litellm.validate_environment` says for an openai/ model."""
        if self.config.api_key_env or self.config.api_base:
            super().preflight()  # neither case asks litellm
            return
        self.register_secrets()
        if not os.environ.get("OPENAI_API_KEY"):
            raise ModelConfigError(
                f"model {self.config.model!r} needs OPENAI_API_KEY in the environment "
                "(or set api_base/api_key_env in the spec)"
            )

    def headers(self) -> dict[str, str]:
        """Bearer key from the same resolution as litellm's, then `headers` and
        `extra_headers` from `extra_body`, as litellm sends them."""
        if self._headers is None:
            key = self._api_key() or self._provider_key()
            headers = {"Content-Type": "application/json"}
            if key:
                headers["Authorization"] = f"Bearer {key}"
            for field in _HEADER_FIELDS:
                extra = self.config.extra_body.get(field)
                if isinstance(extra, Mapping):
                    headers.update({str(k): str(v) for k, v in extra.items()})
            self._headers = headers
        return self._headers

    def _provider_key(self) -> str | None:
        return os.environ.get(f"{self.config.provider.upper()}_API_KEY")

    async def session(self) -> aiohttp.ClientSession:
        """This loop's pooled session: keep-alive connections, as many as may be in flight."""
        loop = asyncio.get_running_loop()
        held = self._sessions.get(loop)
        if held is not None and not held[0].closed:
            return held[0]
        for ended in [k for k, (old, _) in self._sessions.items() if old.closed]:
            del self._sessions[ended]  # closed with their loops: let those loops go
        connector = aiohttp.TCPConnector(limit=self.config.max_concurrency, limit_per_host=0)
        session = aiohttp.ClientSession(
            connector=connector,
            headers=self.headers(),
            timeout=aiohttp.ClientTimeout(total=self.config.timeout_s),  # per attempt
            skip_auto_headers=("User-Agent",),
        )
        closer = _close_with_loop(session)
        await closer.__anext__()
        self._sessions[loop] = (session, closer)
        return session

    async def aclose(self) -> None:
        """Close this loop's session now (otherwise it closes when its loop ends)."""
        held = self._sessions.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[0].close()

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body litellm would send for this request."""
        d = request.decoding
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [m.model_dump() for m in request.messages],
            "temperature": d.temperature,
            "max_tokens": d.max_tokens,
        }
        for name in ("top_p", "seed", "stop"):
            value = getattr(d, name)
            if value is not None:
                body[name] = value
        body.update(d.logprob_options())
        response_format = self.response_format(request)
        if response_format is not None:
            body["response_format"] = response_format
        extra = self.config.extra_body
        if extra:
            body.update({k: v for k, v in extra.items() if k not in _NOT_BODY_FIELDS})
            merged = extra.get("extra_body")
            if isinstance(merged, Mapping):
                body.update(merged)
        return body

    async def send(self, request: ChatRequest) -> RawResponse:
        """One attempt within `timeout_s`; failures typed as the litellm path types them."""
        data = json.dumps(self.body(request), ensure_ascii=False).encode()
        session = await self.session()
        started = time.monotonic()
        try:
            with HOSTED_REQUESTS.held():  # the heap frozen while requests are in flight
                async with session.post(self.url, data=data) as response:
                    payload = await response.read()
                    status, headers = response.status, response.headers
        except TimeoutError:
            self._reached = True
            raise timeout_error(self.config.timeout_s, time.monotonic() - started) from None
        except (aiohttp.ClientError, OSError) as exc:
            self._note_failure(exc)
            raise connection_error(connection_failure(exc, self.config.api_base)) from exc
        self._reached = True
        note_headers(headers)  # x-ratelimit-*, Retry-After: for the rate layer
        if status >= 400:
            raise status_error(status, payload, headers)
        media = media_type(headers)
        if media is not None and not media.endswith("json") and not _is_json(payload):
            raise not_json_error(media, payload)  # as the OpenAI client: JSON is JSON
        return self.to_raw(payload)

    def to_raw(self, payload: bytes) -> RawResponse:
        """A chat-completion body reduced to what assay records and caches."""
        try:
            data: Any = json.loads(payload)
        except ValueError as exc:
            raise bad_body_error(str(exc)) from None
        if not isinstance(data, dict):
            raise bad_body_error(
                f"Empty or invalid response from LLM endpoint. Received: {data!r}. "
                "Check the reverse proxy or model server configuration."
            )
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise bad_body_error("the response has no choices")
        choice = choices[0]
        found = choice.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        return RawResponse(
            content=message.get("content"),
            refusal=message.get("refusal"),
            finish_reason=choice.get("finish_reason"),
            model_returned=data.get("model"),
            response_id=data.get("id"),
            usage=self.usage(data.get("usage")),
            logprobs=token_logprobs(choice.get("logprobs")),
        )

    def usage(self, reported: Any) -> Usage:
        counts = reported if isinstance(reported, dict) else {}
        prompt = int(counts.get("prompt_tokens") or 0)
        completion = int(counts.get("completion_tokens") or 0)
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=int(counts.get("total_tokens") or 0),
            cost_usd=self.pricing.cost(prompt, completion),
        )


def _is_json(payload: bytes) -> bool:
    try:
        json.loads(payload)
    except ValueError:
        return False
    return True


__all__ = ["OPENAI_API_BASE", "OpenAIHTTPTransport", "TransportError", "chat_url"]
