"""`assay validate SPEC [--ping]`: check everything a run would check before sending
anything, render one prompt per judge, and optionally send one small request to every
distinct model endpoint, so a wrong URL, a stopped server or a bad key shows up in
seconds rather than after a run's retry budget."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.judging import JudgeItem, PromptedJudge
from assay.datasets._load import BUILTIN_DATA_DIR, BUILTIN_DATASETS
from assay.errors import AssayError
from assay.models import ChatRequest, Decoding, RetryPolicy, make_client
from assay.prompts._prompt import Message
from assay.redaction import redact_url, scrub_text
from assay.runs.runner._runner import Runner, RunOptions
from assay.runs.spec._spec import load_spec
from assay.runs.spec._targets import Target, spec_targets

PING_TEXT = "Reply with the word OK."


@dataclass(frozen=True)
class PingResult:
    target: Target
    ok: bool
    detail: str

    def line(self) -> str:
        where = f" @ {redact_url(self.target.api_base)}" if self.target.api_base else ""
        word = "ok  " if self.ok else "FAIL"
        return scrub_text(f"{word} {self.target.model}{where} ({self.target.block}): {self.detail}")


def shown_path(path: str | Path) -> str:
    """A dataset as a spec names it: `builtin:NAME` for a bundled file (the same on
    every machine), else its path."""
    for name, file in BUILTIN_DATASETS.items():
        if Path(path) == BUILTIN_DATA_DIR / file:
            return f"builtin:{name}"
    return str(path)


def check_spec(path: str | Path) -> tuple[Runner, list[str]]:
    """Load and build everything a run would (datasets, prompts, judges, factuality
    stage, endpoint settings) and render each judge's prompt with the first row."""
    loaded = load_spec(path)
    runner = Runner(loaded, RunOptions(use_cache=False, progress=False))
    lines = [f"{shown_path(d.path)}: {d.rows} rows ok ({d.name})" for d in runner.datasets]
    items = runner.items.datasets if runner.items is not None else []
    lines += [f"{shown_path(d.path)}: {d.rows} items ok ({d.name})" for d in items]
    lines += [f"warning: {w}" for w in runner.warnings]  # what `assay run` would print
    first = next(((ds, next(ds.iter_pairs())) for ds in runner.datasets if ds.rows), None)
    for judge in runner.judges:
        if isinstance(judge, PromptedJudge) and first is not None:
            ds, pair = first
            item = JudgeItem(
                claim=pair.calibrated_claim, evidence=pair.evidence, question=pair.question
            )
            request = judge.request_for(item, where=f"{ds.path} pair {pair.id!r}")
            size = sum(len(m.content) for m in request.messages)
            lines.append(f"prompt ok: {judge.id} renders the first row ({size} characters)")
    if runner.factuality is not None:
        n = sum(len(d.items) for d in runner.factuality.datasets)
        lines.append(f"factuality ok: {n} answers, {len(runner.factuality.verifiers)} verifiers")
    return runner, lines


def _clients(runner: Runner) -> dict[tuple[str, str | None], Any]:
    components: list[Any] = list(runner.judges)
    if runner.factuality is not None:
        components += [runner.factuality.decomposer, *runner.factuality.verifiers]
    found: dict[tuple[str, str | None], Any] = {}
    for c in components:
        client = getattr(c, "client", None)
        if client is not None:
            found.setdefault((client.config.model, client.config.api_base), client)
    return found


async def _ping_one(target: Target, client: Any) -> PingResult:
    """One request, one attempt, no cache; the error is classified as a run would."""
    try:
        client.preflight()
    except AssayError as exc:
        return PingResult(target, False, exc.message)
    config = client.config.model_copy(update={"retry": RetryPolicy(max_attempts=1)})
    once = make_client(config, None)
    request = ChatRequest(
        messages=[Message(role="user", content=PING_TEXT)], decoding=Decoding(max_tokens=16)
    )
    started = time.perf_counter()
    result = await once.complete(request, use_cache=False)
    took = time.perf_counter() - started
    if result.response is None:
        return PingResult(target, False, result.error or "no response")
    returned = result.response.model_returned or "?"
    return PingResult(target, True, f"{took:.2f} s, model returned {returned!r}")


async def _ping_all(runner: Runner) -> list[PingResult]:
    clients = _clients(runner)
    seen: set[tuple[str, str | None]] = set()
    jobs = []
    for target in spec_targets(runner.loaded.spec):
        key = (target.model, target.api_base)
        if key in seen or key not in clients or not target.hosted:
            continue
        seen.add(key)
        jobs.append(_ping_one(target, clients[key]))
    return list(await asyncio.gather(*jobs))


def ping_targets(runner: Runner) -> list[PingResult]:
    """One request per distinct hosted model endpoint (model + api_base), concurrently."""
    return asyncio.run(_ping_all(runner))
