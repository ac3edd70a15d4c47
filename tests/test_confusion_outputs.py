"""Confusion matrices outside the HTML page: in metrics.json (so `assay report -f json`),
as "confusion" cells of the tidy CSV (and `RunResult.metrics()`), and in
`assay.compare.report_frames(...)["confusions"]`, for items judges and for verifiers
against gold claim labels; each checked against scikit-learn's `confusion_matrix` on the
records. A count (`n_gold`, ...) has no CI: no `n_*_lo`/`n_*_hi` anywhere."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _cli import invoke
from _item_runs import write_item_run
from sklearn.metrics import confusion_matrix

import assay
from assay.compare import report_frames
from assay.core.records import ClaimRecord, VerificationRecord
from assay.core.rundir import latest

LABELS = ["supported", "partially_supported", "unsupported"]


def _report(run: Path, fmt: str) -> str:
    code, out, err = invoke(["report", str(run), "-f", fmt])
    assert code == 0, err
    return out


def _matrix(cells: pd.DataFrame, labels: list[str]) -> list[list[int]]:
    table = cells.pivot_table(index="gold", columns="predicted", values="count", aggfunc="sum")
    return table.reindex(index=labels, columns=labels).fillna(0).astype(int).values.tolist()


@pytest.fixture(scope="module")
def items_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """40 items with random gold; judge `j` answers at random, 5 parse errors."""
    rng = random.Random(7)
    gold = [rng.choice(LABELS) for _ in range(40)]
    pred = [rng.choice(LABELS) if k % 8 else None for k in range(40)]
    items = [{"item_id": f"i{k}", "gold_label": g} for k, g in enumerate(gold)]
    judgments = [
        {"item_id": f"i{k}", "judge_id": "j", "label": p}
        if p is not None
        else {"item_id": f"i{k}", "judge_id": "j", "status": "parse_error"}
        for k, p in enumerate(pred)
    ]
    run = write_item_run(tmp_path_factory.mktemp("cm") / "run", "cm", items, judgments)
    code, _, err = invoke(["recompute", str(run)])
    assert code == 0, err
    both = [(g, p) for g, p in zip(gold, pred, strict=True) if p is not None]
    expected = confusion_matrix([g for g, _ in both], [p for _, p in both], labels=LABELS)
    return run, {"n": len(both), "matrix": expected.tolist()}


def _row(run: Path) -> dict[str, Any]:
    rows = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["items"]["rows"]
    assert len(rows) == 1
    return dict(rows[0])


def test_items_metrics_carry_the_confusion_matrix(items_run: tuple[Path, Any]) -> None:
    run, want = items_run
    row = _row(run)
    ours = {lab: i for i, lab in enumerate(row["labels"])}
    got = [[row["confusion"][ours[g]][ours[p]] for p in LABELS] for g in LABELS]
    assert got == want["matrix"]
    assert sum(map(sum, row["confusion"])) == row["n_gold"] == want["n"]
    data = json.loads(_report(run, "json"))
    assert data["items"]["rows"][0]["confusion"] == row["confusion"]


def test_a_count_gets_no_confidence_interval(items_run: tuple[Path, Any]) -> None:
    run, _ = items_run
    row = _row(run)
    assert row["n_gold"] > 0 and row["accuracy_lo"] is not None
    assert not [k for k in row if k.startswith("n_") and k.endswith(("_lo", "_hi"))]
    for fmt in ("json", "csv", "markdown"):
        assert "n_gold_lo" not in _report(run, fmt) and "n_gold_hi" not in _report(run, fmt)


def test_the_csv_and_the_frames_hold_every_cell(items_run: tuple[Path, Any]) -> None:
    run, want = items_run
    frame = pd.read_csv(io.StringIO(_report(run, "csv")))
    cells = frame[frame["section"] == "confusion"]
    assert set(cells["metric"]) == {"confusion"} and set(cells["judge_or_verifier"]) == {"j"}
    assert len(cells) == len(LABELS) ** 2 and set(cells["n"]) == {want["n"]}
    renamed = cells.rename(columns={"group_by": "gold", "group": "predicted", "value": "count"})
    assert _matrix(renamed, LABELS) == want["matrix"]
    tidy = assay.open_run(run).metrics()
    same = tidy[tidy["section"] == "confusion"]
    assert same["value"].astype(int).tolist() == cells["value"].tolist()


def test_an_old_metrics_file_with_count_intervals_still_reports(
    items_run: tuple[Path, Any], tmp_path: Path
) -> None:
    """metrics.json from before: `n_gold_lo`/`n_gold_hi` present, no matrix."""
    run, _ = items_run
    old = tmp_path / "old"
    old.mkdir()
    for name in ("manifest.json", "items.jsonl", "item_judgments.jsonl"):
        (old / name).write_bytes((run / name).read_bytes())
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    row = metrics["items"]["rows"][0]
    row.update(n_gold_lo=None, n_gold_hi=None)
    del row["labels"], row["confusion"]
    (old / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    frame = pd.read_csv(io.StringIO(_report(old, "csv")))
    assert "confusion" not in set(frame["section"])
    assert not frame["metric"].str.startswith("n_gold_").any()
    assert "Judges vs gold" in _report(old, "table")


ANSWERS = [
    {
        "id": f"a{k}",
        "question": "Q?",
        "answer": text,
        "evidence": [{"id": f"p{k}", "text": evidence}],
        "gold_claims": [
            {"id": f"c{i}", "text": claim, "label": label}
            for i, (claim, label) in enumerate(claims)
        ],
    }
    for k, (text, evidence, claims) in enumerate(
        [
            (
                "Take 5 mg daily with food.",
                "Take 5 mg daily with food, never at night.",
                [
                    ("Take 5 mg daily with food.", "supported"),
                    ("Take it at night.", "contradicted"),
                    ("Take 5 mg.", "supported"),
                ],
            ),
            (
                "It is made in Oslo.",
                "It is made in Oslo by a small firm.",
                [
                    ("It is made in Oslo.", "supported"),
                    ("It is made in Lyon by a firm.", "unsupported"),
                    ("The firm is small and in Oslo.", "supported"),
                ],
            ),
        ]
    )
]
FACT_SPEC = """
name = "claims-cm"
[factuality]
datasets = [{ name = "given", path = "answers.jsonl" }]
decomposer = { kind = "given" }
verifiers = [
  { kind = "overlap", threshold = 0.5 },
  { kind = "overlap", threshold = 0.9, name = "strict" },
]
"""


@pytest.fixture(scope="module")
def fact_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("claims-cm")
    lines = "".join(json.dumps(a) + "\n" for a in ANSWERS)
    (base / "answers.jsonl").write_text(lines, encoding="utf-8")
    (base / "spec.toml").write_text(FACT_SPEC, encoding="utf-8")
    run = base / "run"
    argv = ["run", str(base / "spec.toml"), "--output-dir", str(run), "--no-progress"]
    code, out, err = invoke(argv)
    assert code == 0, out + err
    return run


def _binary(run: Path) -> dict[str, list[list[int]]]:
    """Per verifier: sklearn's 2x2 (supported, not_supported) over the claims it scored."""
    claims = {c.key: c.gold_label for c in latest(run / "claims.jsonl", ClaimRecord).values()}
    pairs: dict[str, list[tuple[str, str]]] = {}
    for v in latest(run / "verifications.jsonl", VerificationRecord).values():
        gold = claims[(v.dataset, v.answer_id, v.claim_id)]
        if v.status.value == "ok" and gold is not None:
            cls = ["supported" if x == "supported" else "not_supported" for x in (gold, v.label)]
            pairs.setdefault(v.verifier_id, []).append((cls[0], cls[1]))
    labels = ["supported", "not_supported"]
    return {
        vid: confusion_matrix([g for g, _ in p], [q for _, q in p], labels=labels).tolist()
        for vid, p in pairs.items()
    }


def test_verifier_gold_confusions_in_csv_and_compare_frames(fact_run: Path) -> None:
    want = _binary(fact_run)
    assert len(want) == 2 and want["baseline:overlap"] != want["strict"]
    frame = pd.read_csv(io.StringIO(_report(fact_run, "csv")))
    cells = frame[(frame["section"] == "confusion") & (frame["metric"] == "claim_confusion")]
    labels = ["supported", "not_supported"]
    for vid, matrix in want.items():
        mine = cells[(cells["judge_or_verifier"] == vid) & (cells["dataset"] == "all")]
        mine = mine.rename(columns={"group_by": "gold", "group": "predicted", "value": "count"})
        assert _matrix(mine, labels) == matrix, vid
    raw = frame[(frame["section"] == "confusion") & (frame["metric"] == "claim_label_confusion")]
    assert set(raw["group_by"]) == {"supported", "unsupported", "contradicted"}
    frames = report_frames(assay.compare_runs([fact_run], n_boot=50))
    table = frames["confusions"]
    for vid, matrix in want.items():
        mine = table[table["judge"] == vid]
        assert _matrix(mine, labels) == matrix, vid
    data = json.loads(_report(fact_run, "json"))
    gold_rows = data["factuality"]["gold"]["rows"]
    assert {r["verifier_id"] for r in gold_rows if r["confusion"]} == set(want)
