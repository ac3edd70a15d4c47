"""DuckDB column types of the record files, derived from the record models.

`read_json` is given every column explicitly (no sampling): a file whose lines all lack
a field, or hold only nulls in it, still loads with the model's type, and a field the
model adds later is typed here without a second list to keep in step."""

from __future__ import annotations

import types
from datetime import datetime
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from assay.core.records import (
    ItemJudgmentRecord,
    ItemRecord,
    JudgmentRecord,
    VerificationRecord,
)
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    ITEMS_FILE,
    JUDGMENTS_FILE,
    VERIFICATIONS_FILE,
)

__all__ = ["COLUMNS", "MODELS", "SELECTS", "duckdb_type", "model_columns"]

_SCALARS: dict[Any, str] = {str: "VARCHAR", bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE"}


def duckdb_type(annotation: Any) -> str:
    """VARCHAR / BOOLEAN / BIGINT / DOUBLE for scalars (enums, literals and datetimes
    are text), JSON for anything nested (usage, parsed, evidence)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return duckdb_type(args[0]) if len(args) == 1 else "JSON"
    if origin is Literal:
        return "VARCHAR"
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if isinstance(annotation, type) and issubclass(annotation, Enum | datetime):
        return "VARCHAR"
    return "JSON"


def model_columns(model: type[BaseModel], names: tuple[str, ...]) -> dict[str, str]:
    """{field: DuckDB type} for the named fields of `model` (a KeyError for a field the
    model no longer has: this list and the records must not drift apart)."""
    return {name: duckdb_type(model.model_fields[name].annotation) for name in names}


_CALL = (
    "judge_id",
    "model",
    "prompt_id",
    "prompt_version",
    "status",
    "label",
    "score",
    "raw_output",
    "error",
    "attempts",
    "latency_s",
    "usage",
    "cache_hit",
    "recorded_at",
)
_VERIFY = tuple("verifier_id" if c == "judge_id" else c for c in _CALL)

# Record file -> its record model (what a line that DuckDB refuses is checked against).
MODELS: dict[str, type[BaseModel]] = {
    JUDGMENTS_FILE: JudgmentRecord,
    ITEM_JUDGMENTS_FILE: ItemJudgmentRecord,
    VERIFICATIONS_FILE: VerificationRecord,
    ITEMS_FILE: ItemRecord,
}

# Record file -> the columns read from it.
COLUMNS: dict[str, dict[str, str]] = {
    JUDGMENTS_FILE: model_columns(JudgmentRecord, ("dataset", "pair_id", "member", *_CALL)),
    ITEM_JUDGMENTS_FILE: model_columns(
        ItemJudgmentRecord, ("dataset", "item_id", "order", "preference", *_CALL)
    ),
    VERIFICATIONS_FILE: model_columns(
        VerificationRecord, ("dataset", "answer_id", "claim_id", "gold_label", *_VERIFY)
    ),
    ITEMS_FILE: model_columns(
        ItemRecord, ("dataset", "item_id", "pairwise", "gold_label", "gold_preference")
    ),
}

_COMMON = """judge_id, model, prompt_id, prompt_version, status, label, score,
    error, raw_output, coalesce(attempts, 0) AS attempts,
    coalesce(latency_s, 0.0) AS latency_s, coalesce(cache_hit, false) AS cache_hit,
    CAST(json_extract(usage, '$.total_tokens') AS BIGINT) AS tokens,
    CAST(json_extract(usage, '$.cost_usd') AS DOUBLE) AS cost_usd, recorded_at"""

# Record file -> the SELECT list mapping its columns onto the judgments table's.
SELECTS: dict[str, str] = {
    JUDGMENTS_FILE: f"""'pair' AS unit, dataset, pair_id AS item_id, member AS variant,
    NULL::VARCHAR AS preference, NULL::VARCHAR AS claim_gold,
    NULL::VARCHAR AS answer_id, NULL::VARCHAR AS claim_id, {_COMMON}""",
    ITEM_JUDGMENTS_FILE: f"""'item' AS unit, dataset, item_id, "order" AS variant,
    preference, NULL::VARCHAR AS claim_gold,
    NULL::VARCHAR AS answer_id, NULL::VARCHAR AS claim_id, {_COMMON}""",
    VERIFICATIONS_FILE: f"""'claim' AS unit, dataset, answer_id || ':' || claim_id AS item_id,
    NULL::VARCHAR AS variant, NULL::VARCHAR AS preference, gold_label AS claim_gold,
    answer_id, claim_id, {_COMMON.replace("judge_id,", "verifier_id AS judge_id,", 1)}""",
}
