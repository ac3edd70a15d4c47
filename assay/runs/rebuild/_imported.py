"""Turn another tool's released per-claim files into an assay run directory.

The point is to recompute published numbers under assay's rules (an unparsable verdict
is unscored, never supported) without calling any model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.records import AnswerRecord
from assay.core.rundir import (
    ANSWERS_FILE,
    CLAIMS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
)
from assay.core.rundir_lock import ELSEWHERE, WriterLock
from assay.errors import RunError
from assay.runs.rebuild._metrics import compute_metrics
from assay.runs.store._manifest import factuality_section, imported_manifest
from assay.runs.store._rundir import check_new_dir
from assay.runs.store._store import write_json_atomic, write_jsonl_atomic, write_manifest


def import_medscore_run(
    source: str | Path,
    run_dir: str | Path,
    *,
    dataset: str = "medscore",
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Write MedScore outputs as a complete run directory; returns the metrics."""
    from assay.datasets import import_medscore_outputs

    run = Path(run_dir)
    check_new_dir(run, what="output directory", fix="choose a directory path with --output-dir")
    if (run / MANIFEST_FILE).exists():
        raise RunError("run directory already holds a run; choose another", file=run)
    sentences, claims, verifications = import_medscore_outputs(source, dataset=dataset)
    run.mkdir(parents=True, exist_ok=True)  # only once the sources have been read
    with WriterLock(run, command="assay import-medscore", fix=ELSEWHERE):
        if (run / MANIFEST_FILE).exists():  # another writer got here first
            raise RunError("run directory already holds a run; choose another", file=run)
        return _write_run(
            Path(source), run, dataset, (sentences, claims, verifications), n_boot, seed
        )


def _write_run(
    source: Path,
    run: Path,
    dataset: str,
    records: tuple[list[Any], list[Any], list[Any]],
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """Every file of the imported run, the manifest last (it marks the run as there)."""
    from assay.datasets import medscore_reported_scores, medscore_response_ids

    sentences, claims, verifications = records
    write_jsonl_atomic(run / SENTENCES_FILE, sentences)
    write_jsonl_atomic(run / CLAIMS_FILE, claims)
    write_jsonl_atomic(run / VERIFICATIONS_FILE, verifications)
    write_jsonl_atomic(run / ANSWERS_FILE, _answers(dataset, medscore_response_ids(source)))
    metrics = compute_metrics(run, n_boot=n_boot, seed=seed)
    try:
        reported = medscore_reported_scores(source)
    except Exception:  # no output.jsonl among the sources: nothing to compare with
        reported = {}
    write_json_atomic(run / METRICS_FILE, metrics)
    described = {
        "datasets": [{"name": dataset, "path": str(source)}],
        "decomposer": {"kind": "imported", "id": "medscore"},
        "verifiers": [{"kind": "imported", "id": "medscore"}],
        "reported_scores": {
            "n": len(reported),
            "mean": _mean([v for v in reported.values() if v is not None]),
        },
    }
    section = factuality_section(
        described, sentences, verifications, len(verifications), n_claims=len(claims)
    )
    spec = {"bootstrap": n_boot, "seed": seed}
    manifest = imported_manifest(Path(source), run, tool="MedScore", spec=spec, factuality=section)
    write_manifest(run / MANIFEST_FILE, manifest)
    return metrics


def _answers(dataset: str, ids: list[str]) -> list[AnswerRecord]:
    """The response universe: responses with no claim exist only here (0-claim rate).
    MedScore's files carry no answer text or gold score."""
    return [AnswerRecord(dataset=dataset, answer_id=i) for i in ids]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
