"""Records with their raw outputs parsed again: ForceBench judgments and item judgments.

The parse is the judge's own (`parse_verdict` with the prompt's output model, labels and
scores); an item judgment also gets again what the items stage derives from the verdict:
its value on the prompt's declared scale (`raw_score`) and, for a pairwise item, the
preference between the dataset's responses A and B (`preference`, unswapped in order
"ba"). A record with no prompt (a baseline) or no answer (`api_error`) is kept as is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, TypeVar

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, JudgmentRecord
from assay.metrics import unswap
from assay.parsing import PARSER_VERSION, ParsedVerdict, parse_verdict
from assay.parsing._confidence import reparsed_probability
from assay.prompts import Prompt

R = TypeVar("R", JudgmentRecord, ItemJudgmentRecord)


def _item_fields(
    record: ItemJudgmentRecord, verdict: ParsedVerdict, prompt: Prompt
) -> dict[str, Any]:
    """`raw_score` and `preference` of an item judgment, as the items stage derives them."""
    field = prompt.meta.score_field
    value = (verdict.parsed or {}).get(field) if field else None
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    out: dict[str, Any] = {"raw_score": float(value) if numeric and value is not None else None}
    if record.label_probability is not None or record.logprobs:
        out["label_probability"] = reparsed_probability(
            verdict, record.raw_output, record.logprobs, record.label_probability,
            prompt.output_model,
        )  # fmt: skip
    if record.order is not None:
        slot = (verdict.label or "").strip().lower()
        ok = verdict.status is Status.OK and slot in ("a", "b", "tie")
        preference = "tie" if slot == "tie" else slot.upper()
        if ok and record.order == "ba":
            preference = unswap(preference)
        out["preference"] = preference if ok else None
    return out


def reparsed(records: Iterable[R], prompts: dict[str, Prompt]) -> tuple[list[R], Counter[str]]:
    """Each record with its raw output parsed again, and the status transitions
    (`"parse_error->ok"`: count)."""
    changes: Counter[str] = Counter()
    updated: list[R] = []
    for record in records:
        prompt = prompts.get(record.judge_id)
        if prompt is None or record.status is Status.API_ERROR:
            updated.append(record)
            continue
        verdict = parse_verdict(
            record.raw_output,
            finish_reason=record.finish_reason,
            refusal=record.refusal,
            output_model=prompt.output_model,
            labels=prompt.meta.labels,
            scores=prompt.meta.scores,
        )
        fields = verdict.model_dump(include={"status", "label", "score", "parsed", "error"})
        if isinstance(record, ItemJudgmentRecord):
            fields |= _item_fields(record, verdict, prompt)
        new = record.model_copy(update={**fields, "parser_version": PARSER_VERSION})
        if new.status != record.status:
            changes[f"{record.status.value}->{new.status.value}"] += 1
        updated.append(new)
    return updated, changes


__all__ = ["reparsed"]
