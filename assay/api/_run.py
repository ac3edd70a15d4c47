"""`assay.run(...)`: the library form of `assay run`, taking Python judges and verifiers.

Spec judges and verifiers run first; objects passed here are added after them (a given
decomposer replaces the spec's). Everything lands in the same run directory, records and
manifest as a CLI run, so `assay report`, `recompute` and resume work on it unchanged.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pydantic import ValidationError

from assay.api._adapters import JudgeFunction, VerifierFunction, as_judge, as_verifier
from assay.api._result import RunResult
from assay.api._spec import SpecLike, to_loaded_spec
from assay.core.decomposition import Decomposer
from assay.core.judging import Judge
from assay.core.verification import Verifier
from assay.errors import AssayError, first_problem
from assay.redaction import scrub_text
from assay.runs import Runner, RunOptions
from assay.runs.store._rundir import refuse_if_written

P = ParamSpec("P")
R = TypeVar("R")
IN_LOOP = (
    "assay.run() was called inside a running event loop (e.g. Jupyter); "
    "use `await assay.run_async(...)` there"
)


def _options(**values: Any) -> RunOptions:
    """`RunOptions`, a bad one (`output_dir=""`) an `AssayError` naming the argument."""
    try:
        return RunOptions(**values)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise AssayError(problem.message, field=problem.field) from None


def run(
    spec: SpecLike,
    *,
    judges: Sequence[Judge | JudgeFunction] = (),
    verifiers: Sequence[Verifier | VerifierFunction] = (),
    decomposer: Decomposer | None = None,
    output_dir: str | Path | None = None,
    use_cache: bool = True,
    refresh_cache: bool = False,
    cache_dir: str | Path | None = None,
    retry_errors: bool = False,
    progress: bool = False,
    max_cost_usd: float | None = None,
    max_requests: int | None = None,
) -> RunResult:
    """Execute `spec` (a TOML path, a `RunSpec` or a dict) plus any judges/verifiers given.

    Re-running with the same arguments resumes. A run that ends `failed` or `interrupted`
    is returned, not raised: check `result.status` and `result.message`. `max_cost_usd`
    and `max_requests` are the run's spending caps (over the spec's); a run they stop
    ends `budget_exhausted`, and resumes with higher ones.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise AssayError(IN_LOOP)
    options = _options(
        output_dir=None if output_dir is None else str(output_dir),
        use_cache=use_cache,
        refresh_cache=refresh_cache,
        cache_dir=None if cache_dir is None else str(cache_dir),
        retry_errors=retry_errors,
        progress=progress,
        max_cost_usd=max_cost_usd,
        max_requests=max_requests,
    )
    judge_objects = [as_judge(j) for j in judges]
    verifier_objects = [as_verifier(v) for v in verifiers]
    given = {"judges"} if judge_objects else set()
    given |= {"verifiers"} if verifier_objects else set()
    loaded = to_loaded_spec(spec, given_in_python=given)
    refuse_if_written(loaded, options)  # before datasets and models are loaded
    runner = Runner(
        loaded,
        options,
        judges=judge_objects,
        decomposer=_checked_decomposer(decomposer),
        verifiers=verifier_objects,
    )
    for message in runner.warnings:
        warnings.warn(scrub_text(message), stacklevel=2)
    return RunResult(runner.run().run_dir)


def _in_worker_thread(fn: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    async def in_thread(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(fn, *args, **kwargs)

    return in_thread


run_async = _in_worker_thread(run)
run_async.__name__ = run_async.__qualname__ = "run_async"
run_async.__doc__ = """`run` for code inside an event loop (Jupyter: `await assay.run_async(...)`).

The run gets its own event loop in a worker thread, so judges must not rely on objects
bound to the caller's loop. Same arguments and result as `run`."""


def _checked_decomposer(decomposer: Decomposer | None) -> Decomposer | None:
    if decomposer is not None and not isinstance(decomposer, Decomposer):
        raise AssayError(
            f"decomposer: a {type(decomposer).__name__} is not a decomposer "
            "(id, describe(), async decompose(sentence, answer=..., answer_id=...))"
        )
    return decomposer
