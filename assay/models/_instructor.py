"""instructor as a structured-output mode (``structured_output = "instructor"``).

instructor asks for an answer shaped like the prompt's output model (a forced function
call, JSON mode or a ```json block), validates it with pydantic and, when it fails,
re-asks with the validation error, up to `max_reasks` times. It runs inside `send`, so
assay's layers stay where they are:

- every HTTP completion of the loop goes through assay's `Retrier` on its own (a 429 on
  a re-ask retries that request, it does not restart the loop); the `Model`'s outer retry
  then only sees final errors;
- instructor's `completion:response` hook reports each completion; the response carries
  the count of requests (`requests`, which the `Model` adds to the result's attempts)
  and the summed tokens and cost of every completion;
- the last completion's text (for tools mode, the function-call arguments) is the
  response content: what the judge parses, the record keeps as `raw_output`, the cache
  stores under a key naming mode, re-ask budget and instructor version, and
  `assay reparse` parses again. An answer still invalid after the re-asks is returned
  like any other: the judge records it as a `parse_error`.

Requests without an output model (verifiers, decomposers) are sent as plain completions.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from importlib.util import find_spec
from typing import Any

from pydantic import Field, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from assay.core.outcomes import Usage
from assay.errors import ModelConfigError
from assay.models._cache import cache_key_parts, hash_parts
from assay.models._config import ModelConfig
from assay.models._hosted import LiteLLMTransport, litellm_module, to_raw
from assay.models._layers import Retrier
from assay.models._retry import TargetUnreachable
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, RawResponse

INSTALL_HINT = "pip install 'assay[instructor]'"
_MODES = {"tools": "TOOLS", "json": "JSON", "md_json": "MD_JSON"}
# instructor logs an error for every call that ends without a valid answer; assay records
# each such call (status, raw output, attempts), and where nothing configured logging (the
# `assay` command) Python's last-resort handler printed the line once per judgment on
# stderr. A handler of its own keeps that; a configured root logger still gets them.
_QUIET = logging.NullHandler()


def instructor_module(mode: str = "tools") -> Any:
    """Import instructor on first use; a missing package is one line naming the extra.
    Tools mode also needs litellm's `mcp` extra: without it the pinned litellm fails every
    `tools=` call before sending it (as a connection error, which would read as an
    unreachable server)."""
    try:
        import instructor

        logging.getLogger("instructor").addHandler(_QUIET)
    except ImportError:
        raise ModelConfigError(
            f'structured_output = "instructor" needs the instructor package: {INSTALL_HINT}'
        ) from None
    if mode == "tools" and find_spec("mcp") is None:
        raise ModelConfigError(
            'instructor_mode = "tools" needs litellm\'s mcp extra (litellm cannot send '
            f'tools without it): {INSTALL_HINT}, or instructor_mode = "json"'
        )
    return instructor


_NOT_ANSWERS = ("length", "content_filter")


class _NoAnswer(Exception):
    """A refusal or a cut-off output: recorded as it is, never re-asked (instructor would
    re-ask a refusal litellm reports outside `message.refusal`, and a filtered output)."""


class InstructorResponse(RawResponse):
    """A chat response that may have taken several requests (the first answer, re-asks
    and retries of either): the last answer, with the usage of them all."""

    requests: int = Field(default=1, ge=1, description="HTTP requests this answer took.")


@dataclass
class _Loop:
    """What one instructor loop sent (counted by its completion function) and got back
    (reported by instructor's `completion:response` hook)."""

    requests: int = 0
    answers: list[RawResponse] = field(default_factory=list)

    def hooks(self) -> Any:
        """Per-call hooks: many loops may run at once."""
        from instructor.core.hooks import Hooks

        hooks = Hooks()
        hooks.on("completion:response", self.on_response)
        return hooks

    def on_response(self, response: Any) -> None:
        self.answers.append(answer_of(response))

    def result(self) -> InstructorResponse:
        """The last answer, with every answer's tokens and cost and every request."""
        last = self.answers[-1]
        return InstructorResponse(
            **last.model_dump(exclude={"usage"}),
            usage=summed_usage([a.usage for a in self.answers]),
            requests=self.requests,
        )


def answer_of(response: Any) -> RawResponse:
    """A completion as assay records it: its first function call's arguments (tools
    mode), else its text."""
    raw = to_raw(litellm_module(), response)
    calls = getattr(response.choices[0].message, "tool_calls", None) or []
    if calls:
        raw.content = calls[0].function.arguments
    return raw


def summed_usage(usages: list[Usage]) -> Usage:
    """Tokens add up; the cost is unknown only when no completion was priced."""
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    return Usage(
        prompt_tokens=sum(u.prompt_tokens for u in usages),
        completion_tokens=sum(u.completion_tokens for u in usages),
        total_tokens=sum(u.total_tokens for u in usages),
        cost_usd=sum(costs) if costs else None,
    )


def _send_failure(exc: BaseException) -> BaseException | None:
    """The request failure behind an instructor error (it wraps what the completion
    function raised), if that is what ended the loop."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, TransportError | TargetUnreachable):
            return seen
        seen = seen.__cause__
    return None


class InstructorTransport(LiteLLMTransport):
    """A hosted chat model asked through instructor (litellm underneath)."""

    response_type = InstructorResponse

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self._instructor = instructor_module(config.instructor_mode)
        self._mode = getattr(self._instructor.Mode, _MODES[config.instructor_mode])
        self._retrier = Retrier(config.retry)
        # what decides instructor's requests: the manifest and the cache key carry it
        self.identity: dict[str, Any] = {
            "instructor_mode": config.instructor_mode,
            "max_reasks": config.max_reasks,
            "instructor_version": version("instructor"),
        }

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.identity}

    def cache_key(self, request: ChatRequest) -> str:
        parts = cache_key_parts(self.config, request, structured_mode="instructor")
        parts["instructor"] = self.identity
        return hash_parts(parts)

    async def send(self, request: ChatRequest) -> InstructorResponse:
        """One instructor loop (or one plain completion for a request with no output
        model); a failed request ends it with a final `TransportError`."""
        if request.output_model is None:
            return InstructorResponse(**(await super().send(request)).model_dump())
        loop = _Loop()
        client = self._instructor.from_litellm(
            partial(self._completion, loop), mode=self._mode, async_client=True
        )
        kwargs = self._kwargs(request)
        del kwargs["max_retries"]  # instructor's own argument: _completion puts it back
        try:
            await client.create(
                response_model=request.output_model,
                messages=kwargs.pop("messages"),
                max_retries=self._reasks(),
                strict=False,  # as lenient as assay's own parser
                hooks=loop.hooks(),
                **kwargs,
            )
        except Exception as exc:  # instructor's error after the loop: see what ended it
            self._raise_send_failure(exc, loop)
        return loop.result()

    def _reasks(self) -> Any:
        """Re-asks on validation errors only, counted, never timed (instructor would
        also stop after `timeout` seconds, which makes the count depend on speed)."""
        from instructor.core.exceptions import AsyncValidationError, ResponseParsingError

        # the answers instructor itself re-asks for (its default predicate)
        invalid = (
            ValidationError,
            json.JSONDecodeError,
            AsyncValidationError,
            ResponseParsingError,
        )
        return AsyncRetrying(
            stop=stop_after_attempt(self.config.max_reasks + 1),
            retry=retry_if_exception_type(invalid),
            reraise=True,
        )

    async def _completion(self, loop: _Loop, **kwargs: Any) -> Any:
        """The completion function instructor calls: one request, retried by assay."""
        kwargs["max_retries"] = 0  # no retries inside the OpenAI SDK either
        try:
            response, attempts = await self._retrier.call(partial(self.acompletion, kwargs))
        except TransportError as exc:
            loop.requests += exc.attempts
            raise
        loop.requests += attempts
        answer = answer_of(response)
        if answer.refusal is not None or answer.finish_reason in _NOT_ANSWERS:
            loop.answers.append(answer)  # instructor never sees it, so no hook does either
            raise _NoAnswer(answer.finish_reason or "refusal")
        return response

    @staticmethod
    def _raise_send_failure(exc: Exception, loop: _Loop) -> None:
        """Re-raise a request failure (final: its retries are spent); an answer that was
        refused, truncated or still invalid is returned by the caller instead."""
        failure = _send_failure(exc)
        if isinstance(failure, TransportError):
            failure.retryable = False
            failure.attempts = max(loop.requests, 1)
            raise failure from None
        if failure is not None:
            raise failure from None
        if not loop.answers:
            raise TransportError.final(exc, error_type="InstructorError") from exc
