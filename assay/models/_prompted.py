"""What every LLM component (judge, decomposer, verifier) shares: a client, a versioned
prompt, decoding settings, a stable id, and one way to call and account for a request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, TypedDict

from assay.models._budget import spending_as
from assay.models._config import Decoding
from assay.models._model import Lookup, Model
from assay.models._types import CallResult, ChatRequest, RawResponse
from assay.prompts._prompt import Prompt


class PromptedOptions(TypedDict, total=False):
    """The keyword options every LLM component passes through to `PromptedModel`."""

    decoding: Decoding | None
    name: str | None
    use_cache: bool
    refresh_cache: bool


class PreparedCall(NamedTuple):
    """A rendered request and its cache lookup, made before it is sent: a caller that
    prepares many at once (`assay.runs.stages._cache_first`) answers the cache hits
    without sending, and sends the rest with their keys already computed."""

    request: ChatRequest
    lookup: Lookup[RawResponse] | None

    @property
    def hit(self) -> CallResult | None:
        """The cached result, or None when the request must be sent."""
        return None if self.lookup is None else self.lookup.result


class PromptedModel:
    """Base for components that render a prompt and ask a model client."""

    #: word used in warnings ("judge", "decomposer", "verifier")
    role = "component"

    def __init__(
        self,
        client: Any,
        prompt: Prompt,
        *,
        tasks: tuple[str, ...],
        decoding: Decoding | None = None,
        name: str | None = None,
        default_id: str | None = None,
        use_cache: bool = True,
        refresh_cache: bool = False,
    ) -> None:
        prompt.check_task(tasks, self.role)
        self.client = client
        self.prompt = prompt
        self.decoding = decoding or Decoding()
        self.use_cache = use_cache
        self.refresh_cache = refresh_cache
        self._id = name or default_id or f"{client.config.model}::{prompt.ref}"

    @property
    def id(self) -> str:
        return self._id

    @property
    def model(self) -> str:
        return str(self.client.config.model)

    def warnings(self) -> list[str]:
        if self.decoding.temperature > 0 and self.decoding.seed is None:
            return [
                f"{self.role} {self.id} samples at temperature {self.decoding.temperature} "
                "without a seed: its outputs are not reproducible"
            ]
        return []

    def base_description(self, kind: str) -> dict[str, Any]:
        """The manifest fields every LLM component has."""
        return {
            "kind": kind,
            "id": self.id,
            "client": self.client.describe(),
            "prompt": self.prompt.identity(),
            "decoding": self.decoding.model_dump(),
            "output_cap_tokens": self.decoding.max_tokens,
        }

    def build_request(
        self,
        variables: dict[str, Any],
        *,
        where: str | None = None,
        response_schema: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> ChatRequest:
        """The request for `variables`. A `response_schema` is the prompt's output model's
        schema, so the model rides along for transports that validate (instructor)."""
        # model_construct: the parts are already validated, and validating the JSON schema
        # dict on every call would copy it (and defeat the cache's schema-hash memo)
        return ChatRequest.model_construct(
            messages=self.prompt.render(variables, where=where),
            decoding=self.decoding,
            response_schema=response_schema,
            output_model=self.prompt.output_model if response_schema is not None else None,
            schema_name=self.prompt.meta.output_schema,
            sample_index=sample_index,
        )

    def prepare_calls(self, requests: Sequence[ChatRequest]) -> list[PreparedCall]:
        """The requests with their response-cache lookups (`Model.lookup_many`; none for
        a client that is not a `Model`, which `call` then asks as it is)."""
        if not isinstance(self.client, Model):
            return [PreparedCall(request, None) for request in requests]
        lookups = self.client.lookup_many(
            requests, use_cache=self.use_cache, refresh_cache=self.refresh_cache
        )
        return [PreparedCall(r, lookup) for r, lookup in zip(requests, lookups, strict=True)]

    async def call(
        self, request: ChatRequest, lookup: Lookup[RawResponse] | None = None
    ) -> tuple[CallResult, dict[str, Any]]:
        """Send a request (`lookup`: its cache lookup from `prepare_calls`, a `Model`'s,
        already made); returns the result and the accounting fields every record has."""
        if lookup is not None and lookup.result is not None:
            return lookup.result, accounting_fields(lookup.result)
        made = {} if lookup is None else {"lookup": lookup}  # any client takes the first form
        with spending_as(self.id):  # its spend and its own cap (max_cost_usd)
            result = await self.client.complete(
                request, use_cache=self.use_cache, refresh_cache=self.refresh_cache, **made
            )
        return result, accounting_fields(result)


def accounting_fields(result: CallResult) -> dict[str, Any]:
    """What every record says of how its call went."""
    return {
        "attempts": result.attempts,
        "cache_hit": result.cache_hit,
        "latency_s": result.latency_s,
        "request_key": result.request_key,
    }
