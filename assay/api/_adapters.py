"""Plain Python functions as judges and verifiers.

The runner takes objects that satisfy the `Judge` / `Verifier` protocols (an `id`, a
`describe()` for the manifest, an async call). A bare function has neither an id nor a
description, so it is wrapped: the id is the function's name and `describe()` records
its module, qualified name and a SHA-256 of its source, so the manifest identifies the
exact code that produced the records.
"""

from __future__ import annotations

import hashlib
import inspect
import marshal
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from assay.core.judging import Judge, JudgeItem, Judgment
from assay.core.verification import ClaimToVerify, Verdict, Verifier
from assay.errors import AssayError

JudgeFunction = Callable[[JudgeItem], Awaitable[Judgment] | Judgment]
VerifierFunction = Callable[[ClaimToVerify], Awaitable[Verdict] | Verdict]
R = TypeVar("R", Judgment, Verdict)


def describe_function(fn: Callable[..., Any]) -> dict[str, Any]:
    """Module, qualified name and a hash of the code: what identifies a function's output."""
    target = inspect.unwrap(fn)
    info: dict[str, Any] = {
        "kind": "python-function",
        "module": getattr(target, "__module__", None),
        "qualname": getattr(target, "__qualname__", type(target).__qualname__),
    }
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):  # defined in a REPL or `python -c`: hash the bytecode
        code = getattr(target, "__code__", None)
        info["code_sha256"] = hashlib.sha256(marshal.dumps(code)).hexdigest() if code else None
    else:
        info["source_sha256"] = hashlib.sha256(source.encode("utf-8")).hexdigest()
    return info


def _function_id(fn: Callable[..., Any], given: str | None) -> str:
    name = given or getattr(fn, "__name__", None) or type(fn).__name__
    if not name or name == "<lambda>":
        raise AssayError("a lambda has no name to use as its id; pass id=... or use def")
    return name


async def _call(fn: Callable[[Any], Any], arg: Any, expected: type[R], what: str) -> R:
    """Call a sync or async function and check it returned the contract's type."""
    result = fn(arg)
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, expected):
        raise TypeError(
            f"{what} {getattr(fn, '__qualname__', fn)!r} returned "
            f"{type(result).__name__}; it must return assay.{expected.__name__}"
        )
    return result


class _Wrapped:
    """What a wrapped function shares: its id and the description of its code."""

    def __init__(self, fn: Callable[..., Any], *, id: str | None = None) -> None:
        self.fn = fn
        self._id = _function_id(fn, id)

    @property
    def id(self) -> str:
        return self._id

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, **describe_function(self.fn)}


class FunctionJudge(_Wrapped):
    """A `Judge` made from `fn(item: JudgeItem) -> Judgment` (async or not)."""

    async def __call__(self, item: JudgeItem) -> Judgment:
        return await _call(self.fn, item, Judgment, "judge")


class FunctionVerifier(_Wrapped):
    """A `Verifier` made from `fn(claim: ClaimToVerify) -> Verdict` (async or not)."""

    async def verify(self, item: ClaimToVerify) -> Verdict:
        return await _call(self.fn, item, Verdict, "verifier")


def _as_component(
    obj: Any, protocol: type[Any], wrapper: type[_Wrapped], *, id: str | None, role: str, shape: str
) -> Any:
    """The object as is when it satisfies `protocol`, else the function wrapped."""
    if isinstance(obj, protocol):
        if id is not None and id != obj.id:
            raise AssayError(f"id={id!r}: id= names a function; this object's id is {obj.id!r}")
        return obj
    if not callable(obj):
        raise AssayError(f"{role}s: a {type(obj).__name__} is neither a {role} ({shape})")
    return wrapper(obj, id=id)


def as_judge(obj: Judge | JudgeFunction, *, id: str | None = None) -> Judge:
    """A judge object as is, or a function wrapped as one (id = its name unless given)."""
    shape = "id, describe(), async __call__) nor a function of a JudgeItem"
    judge: Judge = _as_component(obj, Judge, FunctionJudge, id=id, role="judge", shape=shape)
    return judge


def as_verifier(obj: Verifier | VerifierFunction, *, id: str | None = None) -> Verifier:
    """A verifier object as is, or a function wrapped as one (id = its name unless given)."""
    shape = "id, describe(), async verify()) nor a function of a ClaimToVerify"
    verifier: Verifier = _as_component(
        obj, Verifier, FunctionVerifier, id=id, role="verifier", shape=shape
    )
    return verifier
