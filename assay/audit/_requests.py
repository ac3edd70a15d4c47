"""`requests`: every recorded request key reproduced from the prompt bytes the run
recorded and the dataset rows, with no model call.

A model record's `request_key` is the response-cache key of the request as sent
(`assay.models.cache_key`: model, messages, decoding, structured mode, schema, sample).
Re-rendering the request the way the run did (the component's prompt, the variables
from the dataset row: an item's columns with the `ba` swap of a pairwise item, a
ForceBench pair's member, an answer's sentence, a claim with its evidence; decoding and
client from the manifest) must give the same key; a key that differs names the record
and the likeliest cause. A retrieval verifier's passages come from its corpus searched
again (`_retrieval`), a local model's key joins its recorded fingerprint, and a Python
output model's schema is read from `snapshot/schemas/` (`_render`). A file of the run's
own that does not hold (a corpus, a schema with other bytes) fails once, naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.audit._model import Check, verdict
from assay.audit._render import NO_PASSAGES, Renderer, renderer_for
from assay.audit._retrieval import Refusal
from assay.audit._rows import DatasetRows
from assay.core.manifest import Manifest
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_numbered_rows,
)
from assay.errors import RunError

# record file: (dataset kind, the field naming the component that sent the request)
RENDERED = {
    JUDGMENTS_FILE: ("pairs", "judge_id"),
    ITEM_JUDGMENTS_FILE: ("items", "judge_id"),
    SENTENCES_FILE: ("answers", "decomposer_id"),
    VERIFICATIONS_FILE: ("answers", "verifier_id"),
}


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every whole line, up to a corrupt one: the records check
    names that line, and what comes after it is not checked here."""
    try:
        yield from iter_numbered_rows(path)
    except RunError:
        return


class _Tally:
    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []
        self.skips: dict[str, int] = {}

    def skip(self, reason: str) -> None:
        self.skips[reason] = self.skips.get(reason, 0) + 1

    def refuse(self, component: str, refusal: Refusal) -> None:
        """A component whose records cannot be checked: a skip, or (a file of the run's
        that does not hold) one problem naming it, its records not checked."""
        if not refusal.fails:
            self.skip(refusal.reason)
            return
        problem = f"{component}: {refusal.reason}"
        if problem not in self.problems:
            self.problems.append(problem)
        self.skip(f"not checked, see the problem of {component}")

    def notes(self) -> list[str]:
        return [f"{n} records: {reason}" for reason, n in self.skips.items()]


def _check_row(
    file: str, lineno: int, row: dict[str, Any], render: Renderer, rows: DatasetRows, tally: _Tally
) -> None:
    where = f"{file}:{lineno}"
    variables = rows.variables(row, render.kind)
    if isinstance(variables, str):
        tally.skip(variables)
        return
    outcome = render.check(row, variables)
    tally.checked += 1
    if outcome is not None:
        key = row.get("request_key")
        what = f"request_key {key[:12]}" if key else "(no request)"
        tally.problems.append(f"{where}: {what} {outcome}")


def _sent_nothing(row: dict[str, Any]) -> bool:
    """An LLM verifier's record of a claim with no passage to show: no request, by
    design (a baseline's records say the same, with no prompt)."""
    no_passage = row.get("error") == NO_PASSAGES and row.get("status") == "ok"
    return no_passage and bool(row.get("prompt_sha256"))


def check_requests(run_dir: Path, manifest: Manifest) -> Check:
    tally = _Tally()
    renderers: dict[str, Renderer | Refusal] = {}
    datasets: dict[str, DatasetRows] = {}
    for file, (kind, field) in RENDERED.items():
        if not (run_dir / file).is_file():
            continue
        for lineno, row in _rows(run_dir / file):
            if not row.get("request_key") and not _sent_nothing(row):
                if row.get("prompt_sha256"):
                    tally.skip("no request_key (written before assay recorded request keys)")
                continue
            judge_id = str(row.get(field))
            if judge_id not in renderers:
                renderers[judge_id] = renderer_for(run_dir, manifest, judge_id)
            render = renderers[judge_id]
            if isinstance(render, Refusal):
                tally.refuse(judge_id, render)
                continue
            name = str(row.get("dataset"))
            if name not in datasets:
                datasets[name] = DatasetRows(run_dir, manifest, name, kind)
            _check_row(file, lineno, row, render, datasets[name], tally)
    notes = tally.notes()
    skipped = sum(tally.skips.values())
    return verdict("requests", tally.checked, tally.problems, notes, skipped=skipped)
