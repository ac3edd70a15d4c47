"""One record as the item page shows it: its fields, and the messages it was made from,
rebuilt through the prompt's own `render` (the code path of `build_request`) only when
the prompt file's hash is the record's."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from assay.core.manifest import Manifest
from assay.core.outcomes import CallAccounting, PromptProvenance
from assay.errors import AssayError
from assay.view.detail._models import (
    DATASET_CHANGED,
    EXACT,
    JudgmentDetail,
    MajorityVote,
    Message,
)
from assay.view.detail._sources import check_prompt

_SAMPLE = re.compile(r"^(?P<base>.+)#(?P<index>\d+)$")


def judge_entries(manifest: Manifest) -> dict[str, dict[str, Any]]:
    """Every judge and verifier the manifest describes, by id."""
    entries = [j for j in manifest.judges if isinstance(j, dict)]
    if manifest.factuality is not None:
        entries += [v for v in manifest.factuality.verifiers if isinstance(v, dict)]
    return {str(e["id"]): e for e in entries if e.get("id")}


class Rebuilt:
    """Messages rebuilt for one record, with how far they can be trusted."""

    def __init__(
        self,
        messages: list[Message] | None,
        status: str,
        note: str | None,
        file: str | None,
    ) -> None:
        self.messages, self.status, self.note, self.file = messages, status, note, file


def rebuild(
    identity: dict[str, Any] | None,
    record_sha: str | None,
    variables: dict[str, Any] | None,
    dataset_note: str | None,
) -> Rebuilt:
    """The messages a record was made from. Shown only from a verified prompt file; with
    variables from a dataset file that changed since the run they are shown and marked
    "dataset changed" (the prompt is exact, the values may not be)."""
    check = check_prompt(identity, record_sha)
    if check.prompt is None:
        return Rebuilt(None, check.status, check.note, check.file)
    if variables is None:
        note = dataset_note or "the item's variables are not available"
        return Rebuilt(None, DATASET_CHANGED, note, check.file)
    try:
        rendered = check.prompt.render(variables)
    except AssayError as exc:
        status = DATASET_CHANGED if dataset_note else check.status
        return Rebuilt(None, status, f"cannot render the prompt: {exc}", check.file)
    messages = [Message(role=m.role, content=m.content) for m in rendered]
    if dataset_note:
        return Rebuilt(messages, DATASET_CHANGED, dataset_note, check.file)
    return Rebuilt(messages, EXACT, check.note, check.file)


def _sample(judge_id: str) -> tuple[str | None, int | None]:
    found = _SAMPLE.match(judge_id)
    if found is None:
        return None, None
    return found["base"], int(found["index"])


def judgment_detail(
    record: Any,
    *,
    judge_id: str,
    variant: str | None,
    rebuilt: Rebuilt,
) -> JudgmentDetail:
    """A record (any record model with provenance and accounting) as a JudgmentDetail."""
    assert isinstance(record, PromptProvenance) and isinstance(record, CallAccounting)
    base, index = _sample(judge_id)
    usage = record.usage
    counted = usage.prompt_tokens or usage.completion_tokens or record.attempts
    recorded = getattr(record, "recorded_at", None)
    status = getattr(record, "status", None)
    return JudgmentDetail(
        judge_id=judge_id,
        variant=variant,
        model=record.model,
        model_returned=getattr(record, "model_returned", None),
        prompt_id=record.prompt_id,
        prompt_version=record.prompt_version,
        prompt_sha256=record.prompt_sha256,
        prompt_file=rebuilt.file,
        messages=rebuilt.messages,
        messages_status=rebuilt.status,
        messages_note=rebuilt.note,
        status=str(getattr(status, "value", status)),
        label=getattr(record, "label", None),
        score=getattr(record, "score", None),
        preference=getattr(record, "preference", None),
        raw_output=getattr(record, "raw_output", None),
        parsed=getattr(record, "parsed", None),
        error=getattr(record, "error", None),
        refusal=getattr(record, "refusal", None),
        finish_reason=getattr(record, "finish_reason", None),
        attempts=record.attempts,
        latency_s=record.latency_s,
        prompt_tokens=usage.prompt_tokens if counted else None,
        completion_tokens=usage.completion_tokens if counted else None,
        cost_usd=usage.cost_usd,
        cache_hit=record.cache_hit,
        recorded_at=recorded.isoformat() if recorded is not None else None,
        sample_of=base,
        sample_index=index,
        jury=jury.model_dump() if (jury := getattr(record, "jury", None)) is not None else None,
    )


def majorities(judgments: Sequence[JudgmentDetail]) -> list[MajorityVote]:
    """For each sampled judge (ids `<base>#<k>`) and variant: its samples' labels and
    their vote, as the `#majority` row of the metrics counts it (a tie: no label)."""
    groups: dict[tuple[str, str | None], dict[int, str | None]] = {}
    for j in judgments:
        if j.sample_of is not None and j.sample_index is not None:
            group = groups.setdefault((j.sample_of, j.variant), {})
            group[j.sample_index] = j.label if j.status == "ok" else None
    out: list[MajorityVote] = []
    for (base, variant), by_index in groups.items():
        labels = [by_index[k] for k in sorted(by_index)]
        counts = Counter(label for label in labels if label is not None)
        ranked = counts.most_common()
        top = ranked[0] if ranked else None
        tied = len(ranked) > 1 and ranked[1][1] == ranked[0][1]
        label = None if top is None or tied else top[0]
        share = top[1] / sum(counts.values()) if top is not None else None
        out.append(
            MajorityVote(
                judge_id=f"{base}#majority",
                variant=variant,
                labels=labels,
                label=label,
                agreement=share,
            )
        )
    return out
