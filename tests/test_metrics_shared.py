"""What ForceBench and factuality metrics share: row column order, report frames, pooled and
per-dataset parts, bootstrap settings checks and record field readers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from assay.metrics import (
    CorrelationReport,
    CorrelationRow,
    FactualityReport,
    FactualityRow,
    ForceReport,
    ForceRow,
    GoldReport,
    GoldRow,
    factuality_scores,
    force_metrics,
)
from assay.metrics._pooling import POOLED, BootSettings, pooled_and_per_dataset
from assay.metrics._record_fields import opt_float, opt_int, opt_str, producer_fields

HEAD = ["model", "prompt_id", "prompt_version", "dataset"]


def test_rows_keep_the_column_order_of_assay_0_1() -> None:
    # metrics tables, CSV reports and metrics.json rows list fields in this order
    assert list(ForceRow.model_fields) == [
        "judge_id",
        *HEAD,
        *("group_by", "group", "n", "n_failed"),
        *("mvr", "mvr_lo", "mvr_hi", "fs", "fs_lo", "fs_hi"),
    ]
    assert list(CorrelationRow.model_fields) == [
        "verifier_id",
        *HEAD,
        *("n", "n_predicted", "n_gold", "spearman", "spearman_lo", "spearman_hi"),
        "n_boot_degenerate",
    ]
    assert list(GoldRow.model_fields)[:7] == ["verifier_id", *HEAD, "unscored", "n"]
    assert list(GoldRow.model_fields)[-2:] == ["confusion", "label_confusion"]
    assert list(FactualityRow.model_fields)[:6] == ["verifier_id", *HEAD, "n_responses"]
    assert list(FactualityRow.model_fields)[-3:] == [
        "macro_length_penalized",
        "macro_length_penalized_lo",
        "macro_length_penalized_hi",
    ]


def test_reports_list_rows_first_then_settings() -> None:
    assert list(ForceReport.model_fields) == ["rows", "n_boot", "seed", "confidence"]
    assert list(FactualityReport.model_fields) == [
        "rows",
        *("n_boot", "seed", "confidence", "length_penalty", "gamma"),
    ]
    assert list(CorrelationReport.model_fields) == [
        "rows",
        *("gold_source", "predicted", "n_boot", "seed", "confidence"),
    ]
    assert list(GoldReport.model_fields) == ["rows", "positive", "unscored"]


def test_empty_report_frames_have_the_row_columns() -> None:
    frame = ForceReport(rows=[], n_boot=0, seed=0, confidence=0.9).to_frame()
    assert frame.empty and list(frame.columns) == list(ForceRow.model_fields)
    report = factuality_scores([], n_boot=0)
    assert report.rows == []
    assert list(report.to_frame().columns) == list(FactualityRow.model_fields)


def test_pooled_first_then_each_dataset_only_when_several() -> None:
    def restrict(items: list[str], name: str) -> list[str]:
        return [i for i in items if i.startswith(name)]

    items = ["b1", "a1", "b2"]
    assert pooled_and_per_dataset(items, ["a", "a"], restrict) == [(POOLED, items)]
    assert pooled_and_per_dataset(items, ["b", "a", "b"], restrict) == [
        (POOLED, items),
        ("a", ["a1"]),
        ("b", ["b1", "b2"]),
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"seed": True}, "seed must be a non-negative integer"),
        ({"n_boot": -1}, "n_boot must be a non-negative integer"),
        ({"n_boot": 2.0}, "n_boot must be a non-negative integer"),
        ({"confidence": 1.0}, "confidence must be strictly between 0 and 1"),
    ],
)
def test_both_metric_families_check_bootstrap_settings_alike(
    kwargs: dict[str, object], message: str
) -> None:
    settings = {"n_boot": 10, "seed": 0, "confidence": 0.95, **kwargs}
    with pytest.raises(ValueError, match=message):
        BootSettings(**settings)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        force_metrics([], **settings)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        factuality_scores([], **settings)  # type: ignore[arg-type]


def test_field_readers_treat_frame_missing_values_as_none() -> None:
    for missing in (None, float("nan"), pd.NA, pd.NaT):
        assert opt_str(missing) is None
        assert opt_int(missing) is None
        assert opt_float(missing) is None
    assert opt_int(np.int64(3)) == 3 and type(opt_int(np.int64(3))) is int
    assert opt_float("0.5") == 0.5
    with pytest.raises(TypeError, match="expected an integer"):
        opt_int([1])
    row = {"dataset": "d", "verifier_id": "v", "model": np.nan, "prompt_version": np.int64(2)}
    assert producer_fields(row, "verifier_id") == {
        "dataset": "d",
        "verifier_id": "v",
        "model": None,
        "prompt_id": None,
        "prompt_version": 2,
    }
    with pytest.raises(ValueError, match="missing required field 'judge_id'"):
        producer_fields(row, "judge_id")


def test_force_and_factuality_rows_carry_the_producers_latest_meta() -> None:
    judgments = [
        {"dataset": "d", "pair_id": "p", "member": m, "judge_id": "j", "status": "ok",
         "score": s, "model": model, "prompt_version": 1}
        for m, s, model in (("calibrated", 3.0, "old"), ("raised", 1.0, "new"))
    ]  # fmt: skip
    (force_row, *_) = force_metrics(judgments, n_boot=0).rows
    assert (force_row.model, force_row.prompt_version) == ("new", 1)
    verifications = [
        {"dataset": "d", "answer_id": "a", "claim_id": c, "verifier_id": "v", "status": "ok",
         "label": "supported", "model": model, "prompt_id": pid}
        for c, model, pid in (("c1", "m1", "p"), ("c2", None, None))
    ]  # fmt: skip
    (fact_row,) = factuality_scores(verifications, n_boot=0).rows
    assert (fact_row.model, fact_row.prompt_id, fact_row.macro) == ("m1", "p", 1.0)
