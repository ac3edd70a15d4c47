"""One run directory read into what a comparison needs, and nothing more.

Records are read through `assay.core.rundir` (torn last lines skipped, corrupt lines an
error naming file and line, last record per key wins). Item judgments are validated into
a slim model holding only the fields compared: a run of 100,000 items x 4 judges then
takes ~120 MB instead of ~1.5 GB of full records. Judges sampled several times (`#k`
ids) gain their majority-vote judge `<base>#majority` here, before anything is scored.

As in the run's items metrics (`_item_metrics`): labels, gold labels and raters' labels
are compared after the same case/separator normalisation, and a judge's numeric value is
its `raw_score` (on the prompt's declared scale) when it has one, else its score.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from assay.adjudication import GoldOverlay
from assay.compare._item_columns import (
    VOTE_COLUMNS,
    add_columns,
    gold_from_columns,
    read_preference,
)
from assay.compare._item_data import Gold, ItemData, ItemKey, VoteKey, normalise_label
from assay.core.outcomes import Status
from assay.core.records import ClaimRecord, ItemRecord, VerificationRecord
from assay.core.rundir import (
    CLAIMS_FILE,
    ITEM_JUDGMENTS_FILE,
    ITEMS_FILE,
    JUDGMENTS_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
    latest,
    latest_records,
    read_columns,
)
from assay.errors import RunError
from assay.metrics._calibration import options_from_manifest
from assay.metrics._calibration_stats import DEFAULT_BINS
from assay.metrics._claim_universe import ClaimUniverse, claim_universe
from assay.metrics._force_pairs import judged_pairs, pair_frame
from assay.metrics._majority import Vote, majority_id, majority_of, majority_records, sample_base
from assay.metrics._ordinal import label_orders_from_manifest
from assay.metrics._record_fields import ProducerMeta

__all__ = ["Gold", "ItemData", "ItemKey", "LoadedRun", "VoteKey", "load_run", "normalise_label"]


class _ItemVoteFields(BaseModel):
    """The fields of an `ItemJudgmentRecord` a comparison reads (same validation)."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    item_id: str
    judge_id: str
    order: Literal["ab", "ba"] | None = None
    status: Status
    label: str | None = None
    score: float | None = None
    raw_score: float | None = None
    preference: Literal["A", "B", "tie"] | None = None
    label_probability: float | None = None
    jury: dict[str, Any] | None = None
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None


@dataclass
class ForceData:
    """The ForceBench pair table (a row per judge and pair) and each judge's provenance."""

    pairs: pd.DataFrame
    meta: dict[str, ProducerMeta]


@dataclass
class LoadedRun:
    """What one run directory holds, per kind of item."""

    run_dir: Path
    name: str
    force: ForceData | None = None
    items: ItemData | None = None
    facts: ClaimUniverse | None = None
    majority: list[str] = field(default_factory=list)
    ece_bins: int = DEFAULT_BINS
    """The run's `[calibration] bins` (ECE and reliability bins)."""

    def producers(self) -> list[str]:
        """Judge and verifier ids in display order (runs list them sorted)."""
        ids: list[str] = []
        for part in (self.force and self.force.meta, self.items and self.items.meta):
            ids += [j for j in sorted(part or {}) if j not in ids]
        if self.facts is not None:
            ids += [v for v in sorted(self.facts.verdicts) if v not in ids]
        return ids


def load_run(run_dir: str | Path, overlay: GoldOverlay | None = None) -> LoadedRun:
    """Read `run_dir` (errors name the directory or the file and line); `overlay` lays
    adjudicated gold over the items' (`assay compare --gold`)."""
    from assay.runs.store._rundir import read_run_manifest

    path = Path(run_dir)
    manifest = read_run_manifest(path)
    run = LoadedRun(run_dir=path, name=str(manifest.get("name") or path.name))
    run.ece_bins = options_from_manifest(manifest).bins
    try:
        with collector_paused():
            run.force = _force(path, run.majority)
            run.items = _items(path, run.majority, overlay or GoldOverlay())
            _label_orders(run.items, manifest)
            run.facts = _facts(path)
    except ValueError as exc:  # records that the metrics refuse (e.g. conflicting gold)
        raise RunError(f"cannot compare: {exc}", file=path) from None
    return run


@contextmanager
def collector_paused() -> Iterator[None]:
    """Reading a run allocates a tuple or two per record and keeps them: the cyclic
    garbage collector would rescan them again and again (~15% of the reading time on
    400,000 records) and find nothing, since records make no cycles; and once reading is
    done, its first full pass over them costs a comparison ~0.5 s (`compare_runs` keeps it
    paused throughout)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _force(run_dir: Path, majority: list[str]) -> ForceData | None:
    path = run_dir / JUDGMENTS_FILE
    if not path.exists():
        return None
    records = list(latest_records(path).values())
    if not records:
        return None
    voted = majority_records(records)
    majority += sorted({r.judge_id for r in voted} - set(majority))
    judged = judged_pairs([*records, *voted])
    return ForceData(pairs=pair_frame(judged), meta=judged.judges)


def _gold(record: ItemRecord) -> Gold:
    return Gold(
        pairwise=record.pairwise,
        label=normalise_label(record.gold_label),
        score=record.gold_score,
        preference=record.gold_preference,
        ratings=tuple(sorted((k, normalise_label(v)) for k, v in record.ratings.items())),
    )


def _gold_of_items(path: Path, overlay: GoldOverlay) -> dict[ItemKey, Gold]:
    """Each item's gold: read as columns unless adjudicated gold is laid over it."""
    gold = None if overlay.active else gold_from_columns(path)
    if gold is None:
        return {r.key: _gold(overlay.apply(r)) for r in iter_jsonl(path, ItemRecord)}
    return gold


def _items(run_dir: Path, majority: list[str], overlay: GoldOverlay) -> ItemData | None:
    judged = run_dir / ITEM_JUDGMENTS_FILE
    if not judged.exists():
        return None
    gold = _gold_of_items(run_dir / ITEMS_FILE, overlay)
    rows = set(gold)
    data = ItemData(gold=gold, votes={}, meta={})
    columns = read_columns(judged, VOTE_COLUMNS)
    if columns is None:
        _add_records(data, iter_jsonl(judged, _ItemVoteFields))
    else:
        add_columns(data, columns)
    if not data.votes:
        return None
    if overlay.active:  # items judged without an items.jsonl row get adjudicated gold too
        for (dataset, item_id), g in gold.items():
            if (dataset, item_id) not in rows:
                row = ItemRecord(dataset=dataset, item_id=item_id, pairwise=g.pairwise)
                gold[(dataset, item_id)] = _gold(overlay.apply(row))
    majority += _add_majority(data)
    return data


def _add_records(data: ItemData, records: Iterable[_ItemVoteFields]) -> None:
    """Each record's vote, in file order (a later record for the same key wins)."""
    votes, meta, gold = data.votes, data.meta, data.gold
    for r in records:
        per_judge = votes.get(r.judge_id)
        if per_judge is None:
            per_judge = votes[r.judge_id] = {}
            meta[r.judge_id] = ProducerMeta()
        if r.model is not None or r.prompt_id is not None or r.prompt_version is not None:
            meta[r.judge_id].absorb(r.model, r.prompt_id, r.prompt_version)
        item = (r.dataset, r.item_id)
        score = r.raw_score if r.raw_score is not None else r.score
        ok, label = r.status is Status.OK, normalise_label(r.label)
        vote = Vote(ok, label, score, _preference(r), r.label_probability)
        per_judge[item if r.order is None else (*item, r.order)] = vote
        if r.jury is not None:
            data.juries.add(r.judge_id)
        if item not in gold:
            gold[item] = Gold(pairwise=r.order is not None)


def _label_orders(data: ItemData | None, manifest: dict[str, Any]) -> None:
    """The declared orders of the run's items datasets (its spec, its judges' prompts)."""
    if data is None:
        return
    judged: dict[str, set[str]] = {}
    for judge, votes in data.votes.items():
        for dataset in {key[0] for key in votes}:
            judged.setdefault(dataset, set()).add(judge)
    data.label_orders, data.order_notes = label_orders_from_manifest(manifest, judged)


def _preference(r: _ItemVoteFields) -> str | None:
    """The recorded preference, else the slot label read as the run's metrics read it
    (`a`/`b`/`tie` as the judge saw the order; with B shown first, unswapped)."""
    return read_preference(r.preference, r.order, r.label)


def _add_majority(data: ItemData) -> list[str]:
    """`<base>#majority` votes for every judge with two or more `#k` samples."""
    bases: dict[str, list[str]] = {}
    for judge in sorted(data.votes):
        base = sample_base(judge)
        if base is not None:
            bases.setdefault(base, []).append(judge)
    added: list[str] = []
    for base, samples in bases.items():
        if len(samples) < 2:
            continue
        keys = sorted({k for s in samples for k in data.votes[s]})
        voted = {
            k: majority_of([data.votes[s][k] for s in samples if k in data.votes[s]]) for k in keys
        }
        judge = majority_id(base)
        data.votes[judge] = voted
        data.meta[judge] = data.meta[samples[0]]
        added.append(judge)
    return added


def _facts(run_dir: Path) -> ClaimUniverse | None:
    path = run_dir / VERIFICATIONS_FILE
    if not path.exists():
        return None
    verifications = list(latest(path, VerificationRecord).values())
    if not verifications:
        return None
    claims = list(latest(run_dir / CLAIMS_FILE, ClaimRecord).values())
    return claim_universe(verifications, None, claims, with_gold=True)
