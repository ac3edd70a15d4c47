"""Decorators that add a judge, verifier or decomposer kind a spec can name.

A registered kind is a factory: a class or function whose keyword parameters are the
spec block's keys (checked against its signature or its pydantic params model, see
`assay.core.building`), returning the component. Registering from an installed package
goes through the entry-point group `assay.plugins`, so `assay list` and every spec see it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from assay.core.registry import DECOMPOSERS, JUDGES, VERIFIERS

F = TypeVar("F", bound=Callable[..., Any])


def register_judge(name: str, *, description: str | None = None) -> Callable[[F], F]:
    """``@assay.register_judge("my-judge")``: a spec names it as ``[[judges]] kind``."""
    return cast(Callable[[F], F], JUDGES.register(name, description=description))


def register_verifier(name: str, *, description: str | None = None) -> Callable[[F], F]:
    """``@assay.register_verifier("my-check")``: ``[[factuality.verifiers]] kind``."""
    return cast(Callable[[F], F], VERIFIERS.register(name, description=description))


def register_decomposer(name: str, *, description: str | None = None) -> Callable[[F], F]:
    """``@assay.register_decomposer("my-split")``: ``[factuality.decomposer] kind``."""
    return cast(Callable[[F], F], DECOMPOSERS.register(name, description=description))
