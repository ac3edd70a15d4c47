"""Verdicts on claims: each verifier's record with the passages it was shown (their text
from the answers dataset the run read), the spans to highlight, and the request rebuilt
as `LLMVerifier` builds it. Shared by the claim item page and the answer page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.answers import AnswerItem, Passage
from assay.core.manifest import Manifest
from assay.core.records import ClaimRecord, VerificationRecord
from assay.core.rundir import CLAIMS_FILE, VERIFICATIONS_FILE
from assay.view.detail._judgments import Rebuilt, judge_entries, judgment_detail, rebuild
from assay.view.detail._models import (
    EVIDENCE_MISSING,
    NO_PROMPT,
    NO_REQUEST,
    EvidencePassage,
    Highlight,
    ItemDetail,
    VerdictDetail,
)
from assay.view.detail._scan import LineIndex, matching_records
from assay.view.detail._sources import Loaded, corpus_passages, load_dataset

VERDICT_LABELS = ["supported", "unsupported", "contradicted"]


def shown_passages(claim: ClaimRecord, answer: AnswerItem | None) -> list[Passage]:
    """The passages a context verifier was shown for `claim`: the claim's own gold
    evidence, else the answer's (the verify stage's `claim_inputs`)."""
    if answer is None:
        return []
    from assay.runs.stages._verify import claim_inputs  # the run machinery: on first use

    return list(claim_inputs([(claim.dataset, answer)])(claim).evidence)


def _highlights(record: VerificationRecord, passage_id: str, size: int | None) -> list[Highlight]:
    """Spans of the passage the verdict names: its evidence entries' spans and its
    scored pairs' windows or sentences (offsets clamped to the text)."""
    found: list[Highlight] = []
    for use in record.evidence:
        span = use.get("span")
        if use.get("passage_id") == passage_id and isinstance(span, list | tuple) and span:
            found.append(
                Highlight(start=span[0], end=span[1], source="verdict", score=use.get("score"))
            )
    for pair in record.pairs:
        if pair.passage_id == passage_id and pair.start is not None and pair.end is not None:
            score = getattr(pair, "s_support", None)
            label = pair.span_id or pair.chunk_id
            found.append(
                Highlight(start=pair.start, end=pair.end, source="pair", score=score, label=label)
            )
    if size is None:
        return found
    return [h for h in found if 0 <= h.start <= h.end <= size]


def evidence_of(record: VerificationRecord, passages: list[Passage]) -> list[EvidencePassage]:
    """Each passage the verdict rests on, in its order, with its text when the dataset
    has it (a retrieved passage lives in the retrieval corpus: its text is not shown)."""
    by_id = {p.id: p for p in passages}
    ids = [str(u["passage_id"]) for u in record.evidence if u.get("passage_id") is not None]
    ids += [p.passage_id for p in record.pairs if p.passage_id and p.passage_id not in ids]
    scores = {str(u.get("passage_id")): u.get("score") for u in record.evidence}
    out: list[EvidencePassage] = []
    for pid in dict.fromkeys(ids):
        passage = by_id.get(pid)
        text = passage.text if passage is not None else None
        out.append(
            EvidencePassage(
                passage_id=pid,
                text=text,
                title=passage.title if passage is not None else None,
                doc_id=passage.doc_id if passage is not None else None,
                page=passage.page if passage is not None else None,
                score=scores.get(pid),
                highlights=_highlights(record, pid, len(text) if text is not None else None),
                note=None if passage is not None else "not in the dataset or corpus now",
            )
        )
    return out


def verdict_messages(
    record: VerificationRecord,
    entry: dict[str, Any],
    answer: AnswerItem | None,
    passages: list[Passage],
    note: str | None,
) -> Rebuilt:
    """The request `LLMVerifier._request` built: claim and question, and the shown
    passages (not for kind internal), in the order the verdict lists them."""
    identity = entry.get("prompt")
    if not isinstance(identity, dict):
        return Rebuilt(None, NO_PROMPT, None, None)
    kind = str(entry.get("kind", "")).removeprefix("llm-")
    variables: dict[str, Any] | None = {
        "claim": record.claim,
        "question": answer.question if answer is not None else None,
    }
    if answer is None:
        variables = None
    elif kind != "internal":
        by_id = {p.id: p for p in passages}
        ids = [str(u.get("passage_id")) for u in record.evidence]
        if not ids:
            return Rebuilt(None, NO_REQUEST, "the claim had no passages: no model was asked", None)
        missing = [i for i in ids if i not in by_id]
        if missing:
            why = f"passages {missing} are not in the answers dataset or retrieval corpus"
            return Rebuilt(None, EVIDENCE_MISSING, why, None)
        assert variables is not None
        variables["passages"] = [by_id[i].model_dump() for i in ids]
    return rebuild(identity, record.prompt_sha256, variables, note)


def verdict_detail(
    record: VerificationRecord,
    claim: ClaimRecord | None,
    entries: dict[str, dict[str, Any]],
    loaded: Loaded,
) -> VerdictDetail:
    """One verification record with its passages and its rebuilt request."""
    answer = loaded.by_id.get(record.answer_id)
    source = claim or ClaimRecord(
        dataset=record.dataset,
        answer_id=record.answer_id,
        sentence_id=record.sentence_id or 0,
        claim_id=record.claim_id,
        claim=record.claim,
        decomposer_id="",
    )
    entry = entries.get(record.verifier_id, {})
    note = loaded.note
    if answer is None and loaded.dataset is not None:
        note = f"answer {record.answer_id!r} is not in {loaded.path} now"
    if str(entry.get("kind", "")) == "llm-retrieval":  # the passages its retriever found
        corpus, corpus_note = corpus_passages(entry.get("retriever"))
        ids = [str(u.get("passage_id")) for u in record.evidence]
        passages = [corpus[i] for i in ids if i in corpus]
        note = "; ".join(n for n in (note, corpus_note) if n) or None
    else:
        passages = shown_passages(source, answer)
    built = verdict_messages(record, entry, answer, passages, note)
    detail = judgment_detail(record, judge_id=record.verifier_id, variant=None, rebuilt=built)
    pairs = [p.model_dump(mode="json", exclude_none=True) for p in record.pairs]
    return VerdictDetail(judgment=detail, evidence=evidence_of(record, passages), pairs=pairs)


def split_claim_id(item_id: str) -> list[tuple[str, str]]:
    """`answer_id:claim_id` split at each colon, last first (ids may hold colons)."""
    cuts = [i for i, ch in enumerate(item_id) if ch == ":"]
    return [(item_id[:i], item_id[i + 1 :]) for i in reversed(cuts)]


def claim_detail(
    run_dir: Path, manifest: Manifest, dataset: str, item_id: str, *, index: LineIndex | None
) -> ItemDetail:
    """A claim as an item (`answer_id:claim_id`): its verdicts, one per verifier."""
    loaded = load_dataset(run_dir, manifest, dataset, kind="answers")
    entries = judge_entries(manifest)
    for answer_id, claim_id in split_claim_id(item_id):
        where = {"dataset": dataset, "answer_id": answer_id, "claim_id": claim_id}
        records = matching_records(
            run_dir / VERIFICATIONS_FILE, VerificationRecord, claim_id, where, index=index
        )
        claims = matching_records(run_dir / CLAIMS_FILE, ClaimRecord, claim_id, where)
        if not records and not claims:
            continue
        claim = claims[-1] if claims else None
        verdicts = [verdict_detail(r, claim, entries, loaded) for r in records]
        gold = claim.gold_label if claim is not None else records[0].gold_label
        text = claim.claim if claim is not None else records[0].claim
        answer = loaded.by_id.get(answer_id)
        return ItemDetail(
            dataset=dataset,
            item_id=item_id,
            unit="claim",
            pairwise=False,
            variables={"claim": text, "question": answer.question if answer else None},
            variables_note=loaded.note,
            dataset_file=loaded.path,
            gold={"label": gold} if gold is not None else {},
            labels=VERDICT_LABELS,
            judgments=[v.judgment for v in sorted(verdicts, key=lambda v: v.judgment.judge_id)],
        )
    raise KeyError(f"no claim {item_id!r} (answer_id:claim_id) in dataset {dataset!r} of {run_dir}")
