"""A factuality run's answers, and one answer as a chain: answer -> sentences -> claims
-> each verifier's verdict (passages, highlighted spans, rebuilt request) -> what each
applied policy did with each claim and with the answer (its certificate)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from assay.core.manifest import Manifest
from assay.core.records import AnswerRecord, ClaimRecord, SentenceRecord, VerificationRecord
from assay.core.rundir import (
    ANSWERS_FILE,
    CLAIMS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
    latest,
    read_manifest,
)
from assay.view.detail._claims import verdict_detail
from assay.view.detail._judgments import judge_entries
from assay.view.detail._models import (
    AnswerDetail,
    AnswerSummary,
    ClaimDetail,
    SentenceDetail,
    VerdictDetail,
)
from assay.view.detail._policies import (
    applied_policies,
    mark_policy_spans,
    policy_answer,
    policy_claims,
)
from assay.view.detail._scan import matching_records
from assay.view.detail._sources import Loaded, Stamp, load_dataset, stamp


class _Verdict(BaseModel):
    """The fields of a verifications.jsonl line the answers list counts (the rest of
    the line, its pairs above all, is skipped unvalidated: 10x faster on big runs)."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    answer_id: str
    claim_id: str
    verifier_id: str
    status: str
    label: str | None = None


class _Unit(BaseModel):
    """The fields of a sentences.jsonl or claims.jsonl line the answers list counts."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    answer_id: str
    sentence_id: int | None = None
    claim_id: str | None = None


def answers(run_dir: Path) -> list[AnswerSummary]:
    """Every answer of the run (answers.jsonl, and any answer only claims name), with
    its sentence and claim counts and each verifier's labels. Computed once per state of
    the record files (their size and modification time)."""
    files = (ANSWERS_FILE, SENTENCES_FILE, CLAIMS_FILE, VERIFICATIONS_FILE)
    stamps = tuple(stamp(run_dir / name) for name in files)
    return list(_answers(run_dir, stamps))


@lru_cache(maxsize=8)
def _answers(run_dir: Path, stamps: tuple[Stamp | None, ...]) -> tuple[AnswerSummary, ...]:
    del stamps  # the cache key: a changed file is read again
    records: dict[tuple[str, str], AnswerRecord] = latest(run_dir / ANSWERS_FILE, AnswerRecord)
    sentences: dict[tuple[str, str], set[int | None]] = {}
    for s in iter_jsonl(run_dir / SENTENCES_FILE, _Unit):
        sentences.setdefault((s.dataset, s.answer_id), set()).add(s.sentence_id)
    claims: dict[tuple[str, str], set[str | None]] = {}
    for c in iter_jsonl(run_dir / CLAIMS_FILE, _Unit):
        claims.setdefault((c.dataset, c.answer_id), set()).add(c.claim_id)
    verdicts = {
        (v.dataset, v.answer_id, v.claim_id, v.verifier_id): v.label or v.status
        for v in iter_jsonl(run_dir / VERIFICATIONS_FILE, _Verdict)
    }
    labels: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
    for (dataset, answer_id, _, verifier), label in verdicts.items():
        counts = labels.setdefault((dataset, answer_id), {}).setdefault(verifier, {})
        counts[label] = counts.get(label, 0) + 1
    return tuple(
        AnswerSummary(
            dataset=k[0],
            answer_id=k[1],
            question=records[k].question if k in records else None,
            n_sentences=len(sentences.get(k, ())),
            n_claims=len(claims.get(k, ())),
            labels=dict(sorted(labels.get(k, {}).items())),
        )
        for k in sorted(set(records) | set(claims))
    )


def answer_detail(run_dir: Path, answer_id: str, *, dataset: str | None = None) -> AnswerDetail:
    """One answer's chain (KeyError when the run has no such answer; `dataset` picks
    one when two datasets share the id)."""
    manifest = read_manifest(run_dir)
    where = {"answer_id": answer_id} | ({"dataset": dataset} if dataset else {})
    records = matching_records(run_dir / ANSWERS_FILE, AnswerRecord, answer_id, where)
    claims = matching_records(run_dir / CLAIMS_FILE, ClaimRecord, answer_id, where)
    found = sorted({r.dataset for r in records} | {c.dataset for c in claims})
    if not found:
        raise KeyError(f"no answer {answer_id!r} in {run_dir}")
    name = found[0]
    if dataset is None and len(found) > 1:
        raise KeyError(f"answer {answer_id!r} is in datasets {found}: name one")
    where = {"answer_id": answer_id, "dataset": name}
    record = next((r for r in records if r.dataset == name), None)
    sentences = matching_records(run_dir / SENTENCES_FILE, SentenceRecord, answer_id, where)
    verdicts = matching_records(run_dir / VERIFICATIONS_FILE, VerificationRecord, answer_id, where)
    loaded = load_dataset(run_dir, manifest, name, kind="answers")
    claim_details = _claims(
        run_dir, manifest, loaded, [c for c in claims if c.dataset == name], verdicts
    )
    text, note = _answer_text(loaded, answer_id, sentences)
    placed, unplaced = _place(sorted(sentences, key=lambda s: s.sentence_id), claim_details)
    item = loaded.by_id.get(answer_id)
    question = record.question if record is not None else (item.question if item else None)
    return AnswerDetail(
        dataset=name,
        answer_id=answer_id,
        question=question,
        answer=text,
        answer_note=note,
        record=record.model_dump(mode="json") if record is not None else None,
        sentences=placed,
        unplaced_claims=unplaced,
        policies=[
            p
            for p in (policy_answer(a, name, answer_id) for a in applied_policies(run_dir))
            if p is not None
        ],
    )


def _claims(
    run_dir: Path,
    manifest: Manifest,
    loaded: Loaded,
    claims: list[ClaimRecord],
    verdicts: list[VerificationRecord],
) -> list[tuple[int, ClaimDetail]]:
    """Each claim (in claim order) with its verdicts and the policies' actions."""
    entries = judge_entries(manifest)
    by_claim: dict[str, list[VerdictDetail]] = {}
    by_id = {c.claim_id: c for c in claims}
    for v in sorted(verdicts, key=lambda v: v.verifier_id):
        verdict = verdict_detail(v, by_id.get(v.claim_id), entries, loaded)
        by_claim.setdefault(v.claim_id, []).append(verdict)
    applied = applied_policies(run_dir)
    if not claims:
        return []
    dataset, answer_id = claims[0].dataset, claims[0].answer_id
    actions = [policy_claims(a, dataset, answer_id) for a in applied]
    from assay.policies.engine._run_inputs import claim_order  # every policy kind: lazily

    out: list[tuple[int, ClaimDetail]] = []
    for c in sorted(claims, key=claim_order):
        detail = ClaimDetail(
            claim_id=c.claim_id,
            claim=c.claim,
            span=c.span,
            gold_label=c.gold_label,
            verdicts=by_claim.get(c.claim_id, []),
            policies=[a[c.claim_id] for a in actions if c.claim_id in a],
        )
        mark_policy_spans(detail)
        out.append((c.sentence_id, detail))
    return out


def _place(
    sentences: list[SentenceRecord], claims: list[tuple[int, ClaimDetail]]
) -> tuple[list[SentenceDetail], list[ClaimDetail]]:
    """Claims under their sentences; a claim whose sentence has no record is unplaced."""
    out = [
        SentenceDetail(
            sentence_id=s.sentence_id,
            sentence=s.sentence,
            span=s.span,
            status=s.status.value,
            error=s.error,
        )
        for s in sentences
    ]
    index = {s.sentence_id: s for s in out}
    unplaced: list[ClaimDetail] = []
    for sentence_id, claim in claims:
        if sentence_id in index:
            index[sentence_id].claims.append(claim)
        else:
            unplaced.append(claim)
    return out, unplaced


def _answer_text(
    loaded: Loaded, answer_id: str, sentences: list[SentenceRecord]
) -> tuple[str | None, str | None]:
    """The answer as the dataset has it; else pieced from its sentences' spans."""
    item = loaded.by_id.get(answer_id)
    if item is not None:
        return str(item.answer), loaded.note
    if not sentences:
        return None, loaded.note or "the answers dataset is not readable"
    ordered = sorted(sentences, key=lambda s: s.sentence_id)
    if all(s.span is not None for s in ordered):
        size = max(s.span[1] for s in ordered if s.span is not None)
        chars = [" "] * size
        for s in ordered:
            assert s.span is not None
            chars[s.span[0] : s.span[0] + len(s.sentence)] = list(s.sentence)
        text = "".join(chars[:size])
    else:
        text = " ".join(s.sentence for s in ordered)
    why = loaded.note or "the answer is not in the dataset"
    return text, f"{why}; the text is pieced together from its sentences"
