"""The transport contract: send ONE request, return the raw response or raise a classified
`TransportError`. Caching, retries, concurrency and accounting are not a transport's job:
`assay.models.Model` wraps any transport once with those layers.

A transport is registered in `assay.core.registry.TRANSPORTS` under the model-id prefix it
serves (``hf`` for ``hf/<dir>``); `make_client` builds it with ``factory(config)``. Its
optional ``variants`` map a selector a config asks for (``"instructor"``, ``"openai"``)
to the ``"module:attribute"`` of the transport serving it (see `transport_for`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from assay.models._config import ModelConfig

RequestT = TypeVar("RequestT", contravariant=True)
ResponseT = TypeVar("ResponseT", bound=BaseModel, covariant=True)


class TransportError(Exception):
    """One failed send, classified by the transport that saw it.

    `retryable` says whether another attempt may succeed (a 429, a 5xx, a timeout);
    `retry_after_s` is the wait the server asked for, if any. Any other exception a
    transport raises is fatal for the whole run (e.g. a model that cannot be loaded).
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str,
        status_code: int | None = None,
        retryable: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type
        self.status_code = status_code
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.attempts = 1  # set by the retry layer when it gives up

    @classmethod
    def final(cls, exc: BaseException, *, error_type: str | None = None) -> TransportError:
        """A failure no retry can fix (e.g. a local generation that raised)."""
        return cls(str(exc), error_type=error_type or type(exc).__name__)

    def render(self) -> str:
        """``ErrorType 429: message``: what a record's `error` field shows."""
        code = f" {self.status_code}" if self.status_code else ""
        return f"{self.error_type}{code}: {self.message}"


@runtime_checkable
class Transport(Protocol[RequestT, ResponseT]):
    """Sends one request of one kind (a chat request, an NLI pair) to one model."""

    config: ModelConfig

    @property
    def response_type(self) -> type[ResponseT]:
        """The pydantic model of a response: what the cache stores and reads back."""
        ...

    @property
    def max_concurrency(self) -> int:
        """Requests this transport may have in flight at once."""
        ...

    def describe(self) -> dict[str, Any]:
        """Everything that decides an output, for the run manifest (never raises)."""
        ...

    def cache_key(self, request: RequestT) -> str:
        """A credential-free key over everything that can change the response."""
        ...

    async def send(self, request: RequestT) -> ResponseT:
        """One attempt. Raises `TransportError` for this request's failure."""
        ...


@runtime_checkable
class BatchTransport(Transport[RequestT, ResponseT], Protocol):
    """A transport that answers many requests in one call (local models batch on device)."""

    async def send_batch(self, requests: Sequence[RequestT]) -> Sequence[ResponseT]:
        """Responses in request order; a `TransportError` fails the whole batch."""
        ...
