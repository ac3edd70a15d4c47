"""The litellm transport: one hosted chat request per `send`, failures classified.

Caching, retries and the concurrency bound are the `Model` layers' job (models/_model.py).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any, ClassVar

from assay._collector import HOSTED_REQUESTS, paused
from assay.core.outcomes import Usage
from assay.models._cache import ChatKeys
from assay.models._config import ModelConfig
from assay.models._logprobs import token_logprobs
from assay.models._openai_errors import bad_body_error, litellm_not_json
from assay.models._ratelimit_headers import litellm_headers, note_headers
from assay.models._retry import TargetUnreachable, classify, connection_failure, status_of
from assay.models._transport_choice import ChosenTransport, TransportChoice, choose_transport
from assay.models._types import ChatRequest, RawResponse
from assay.redaction import redact, redact_url, register_secrets, secret_values

_LITELLM: Any = None
UNREACHABLE_AFTER = 3  # failed connection attempts, before any answer, that stop a run


def litellm_module() -> Any:
    """Import litellm on first use: it costs seconds and must stay out of `assay --help`."""
    global _LITELLM
    if _LITELLM is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        with paused(freeze=True):  # its import alone made ~0.9 s of full collections
            import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        _LITELLM = litellm
    return _LITELLM


class HostedEndpoint:
    """What every hosted transport shares, whatever sends its requests: the secrets it
    teaches `scrub_text`, the key, structured-output resolution, preflight, the manifest
    description, the cache key, and the stop when its server never answers."""

    response_type = RawResponse
    wire: ClassVar[ChosenTransport] = "litellm"  # which client sends (the manifest's `transport`)

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._structured: str | None = None
        self._keys: ChatKeys | None = None  # made once the structured mode is resolved
        self._reached = False  # has the server ever answered (even with an error)?
        self._unreached = 0  # attempts that failed to connect before any answer
        self.stop_if_unreachable = False  # a run sets it: see _note_failure
        self.register_secrets()

    @property
    def max_concurrency(self) -> int:
        return self.config.max_concurrency

    def register_secrets(self) -> None:
        """Teach `scrub_text` this endpoint's secrets: the key variables' values and any
        credential inside `api_base` or `extra_body` (error messages may echo them)."""
        env_names = [self.config.api_key_env, f"{self.config.provider.upper()}_API_KEY"]
        values = [os.environ.get(name) for name in env_names if name]
        values += secret_values({"api_base": self.config.api_base})
        values += secret_values(self.config.extra_body)
        register_secrets(values)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "hosted",
            "provider": self.config.provider,
            "api_base": redact_url(self.config.api_base),
            "model": self.config.model,
            "timeout_s": self.config.timeout_s,
            "max_concurrency": self.config.max_concurrency,
            "retry": self.config.retry.model_dump(),
            "structured_output": self.structured_mode(),
            "extra_body": redact(self.config.extra_body),
            **self.transport_choice().describe(),
        }

    def transport_choice(self) -> TransportChoice:
        """The client sending this model's requests, and why: `choose_transport`'s choice,
        or (a transport built directly, not by `transport_for`) this class itself."""
        choice = choose_transport(self.config)
        if choice.name != self.wire:
            return TransportChoice(self.wire, f"{type(self).__name__} built directly")
        return choice

    def structured_mode(self) -> str:
        """Resolve 'auto' once: JSON schema where litellm knows the model supports it."""
        if self._structured is None:
            mode = self.config.structured_output
            if mode == "auto":
                try:
                    ok = litellm_module().supports_response_schema(model=self.config.model)
                except Exception:
                    ok = False
                mode = "json_schema" if ok else "off"
            self._structured = mode
        return self._structured

    def preflight(self) -> None:
        """Fail before the first request when credentials are visibly missing."""
        from assay.errors import ModelConfigError

        self.register_secrets()  # the environment may have changed since __init__
        env = self.config.api_key_env
        if env:
            if not os.environ.get(env):
                raise ModelConfigError(
                    f"model {self.config.model!r}: environment variable {env} "
                    "(api_key_env) is not set"
                )
            return
        if self.config.api_base:
            return
        try:
            check = litellm_module().validate_environment(model=self.config.model)
        except Exception:
            return
        missing = check.get("missing_keys") or []
        if not check.get("keys_in_environment", True) and missing:
            raise ModelConfigError(
                f"model {self.config.model!r} needs {', '.join(missing)} in the environment "
                "(or set api_base/api_key_env in the spec)"
            )

    def _api_key(self) -> str | None:
        if self.config.api_key_env:
            return os.environ.get(self.config.api_key_env)
        if self.config.api_base and not os.environ.get(f"{self.config.provider.upper()}_API_KEY"):
            return "no-key"  # local OpenAI-compatible servers accept any key
        return None

    def response_format(self, request: ChatRequest) -> dict[str, Any] | None:
        """The `response_format` sent for this request by the resolved structured mode."""
        mode = self.structured_mode()
        if mode == "json_object":
            return {"type": "json_object"}
        if mode == "json_schema" and request.response_schema is not None:
            return {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.response_schema},
            }
        return None

    def _note_failure(self, exc: BaseException) -> None:
        """Before the server has ever answered, UNREACHABLE_AFTER attempts in a row that
        failed to connect mean it is not there: with `stop_if_unreachable` (set by runs),
        raise `TargetUnreachable` to stop the run. Once it has answered, connection errors
        are transient and retried as usual; a client used on its own just retries."""
        failure = connection_failure(exc, self.config.api_base)
        if failure is None:
            self._reached = self._reached or status_of(exc) is not None
            return
        if self._reached:
            return
        self._unreached += 1
        if self._unreached >= UNREACHABLE_AFTER and self.stop_if_unreachable:
            raise TargetUnreachable(failure, self.config.model, self.config.api_base) from exc

    def cache_key(self, request: ChatRequest) -> str:
        """The response-cache key: config + request + the structured-output mode sent.
        The transport is not part of it: both send the same request."""
        if self._keys is None:
            self._keys = ChatKeys(self.config, self.structured_mode())
        return self._keys.key(request)


class LiteLLMTransport(HostedEndpoint):
    """One model endpoint reached through litellm (any provider litellm knows, or an
    OpenAI-compatible server at `api_base`)."""

    variants: ClassVar[Mapping[str, str]] = {
        "instructor": "assay.models._instructor:InstructorTransport",
        "openai": "assay.models._openai_http:OpenAIHTTPTransport",  # aiohttp loads on use
    }
    """The transports that serve these hosted models another way, by the selector a
    config asks for (`structured_output = "instructor"`, `transport = "openai"`)."""

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        d = request.decoding
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": d.temperature,
            "max_tokens": d.max_tokens,
            "timeout": self.config.timeout_s,
            "max_retries": 0,
            "num_retries": 0,
        }
        for name in ("top_p", "seed", "stop"):
            value = getattr(d, name)
            if value is not None:
                kwargs[name] = value
        kwargs.update(d.logprob_options())
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        key = self._api_key()
        if key:
            kwargs["api_key"] = key
        response_format = self.response_format(request)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.config.extra_body:
            # a copy: litellm adds its own fields to dicts such as `metadata`
            kwargs.update(copy.deepcopy(self.config.extra_body))
        return kwargs

    async def send(self, request: ChatRequest) -> RawResponse:
        """One attempt; litellm enforces `timeout` per attempt and retries nothing."""
        response = await self.acompletion(self._kwargs(request))
        if not getattr(response, "choices", None):  # was an IndexError that ended the run
            raise bad_body_error("the response has no choices")
        return to_raw(litellm_module(), response)

    async def acompletion(self, kwargs: dict[str, Any]) -> Any:
        """One HTTP completion with these litellm arguments: litellm's response, or a
        classified `TransportError` (`TargetUnreachable` when the server never answers).
        The heap stays frozen while any is in flight (assay/_collector.py)."""
        try:
            with HOSTED_REQUESTS.held():
                response = await litellm_module().acompletion(**kwargs)
        except Exception as exc:
            self._note_failure(exc)
            note_headers(litellm_headers(exc))  # for the rate layer: a 429's reset
            raise litellm_not_json(exc) or classify(exc, self.config.api_base) from exc
        self._reached = True
        note_headers(litellm_headers(response))
        return response


def to_raw(litellm: Any, response: Any) -> RawResponse:
    """litellm's response reduced to what assay records and caches."""
    choice = response.choices[0]
    message = choice.message
    usage = getattr(response, "usage", None)
    cost: float | None = None
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:  # litellm already priced it (None: model not in its map)
        value = hidden["response_cost"]
        cost = float(value) if value is not None else None
    else:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:
            cost = None
    refusal_text = getattr(message, "refusal", None)
    if refusal_text is None:  # litellm keeps OpenAI's `refusal` among provider fields
        extra = getattr(message, "provider_specific_fields", None) or {}
        refusal_text = extra.get("refusal") if isinstance(extra, dict) else None
    return RawResponse(
        content=getattr(message, "content", None),
        refusal=refusal_text,
        finish_reason=getattr(choice, "finish_reason", None),
        model_returned=getattr(response, "model", None),
        response_id=getattr(response, "id", None),
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
            cost_usd=cost,
        ),
        logprobs=token_logprobs(getattr(choice, "logprobs", None)),
    )
