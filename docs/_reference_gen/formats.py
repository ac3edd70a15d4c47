"""The run directory's file formats: each file and the model of its records.

Every table is the model's fields (`_reference_gen.models`); a model a field refers to
(a nested object) gets its own table below the first file that uses it. Which model a
file holds is stated here once, next to the file-name constants the code writes by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel

from _reference_gen.models import escape, rows, slug, table, unwrap

NULL = "null"


@dataclass(frozen=True)
class FileFormat:
    """One file of a run directory (`where` it sits) and the model of its content."""

    name: str
    where: str
    model: type[BaseModel]
    note: str = ""


def run_files() -> list[FileFormat]:
    """The files `assay run` writes (and reparse, recompute, imports rewrite)."""
    from assay.core import records as r
    from assay.core import rundir as d
    from assay.core.manifest import Manifest

    return [
        FileFormat(d.MANIFEST_FILE, "", Manifest),
        FileFormat(d.JUDGMENTS_FILE, "", r.JudgmentRecord),
        FileFormat(d.ITEMS_FILE, "", r.ItemRecord),
        FileFormat(d.ITEM_JUDGMENTS_FILE, "", r.ItemJudgmentRecord),
        FileFormat(d.ANSWERS_FILE, "", r.AnswerRecord),
        FileFormat(d.SENTENCES_FILE, "", r.SentenceRecord),
        FileFormat(d.CLAIMS_FILE, "", r.ClaimRecord),
        FileFormat(d.VERIFICATIONS_FILE, "", r.VerificationRecord),
        FileFormat(d.GATES_FILE, "", r.GateRecord),
    ]


def adjudication_files() -> list[FileFormat]:
    """What a person writes beside the records (`assay view`, `append_adjudication`)."""
    from assay.adjudication import LABELS_FILE, Adjudication

    return [FileFormat(LABELS_FILE, "", Adjudication, "The latest line per item wins.")]


def metrics_parts() -> list[FileFormat]:
    """The parts of `metrics.json` and the report model each one dumps."""
    from assay.core.rundir import METRICS_FILE
    from assay.metrics import (
        CorrelationReport,
        FactualityReport,
        ForceReport,
        GoldReport,
        ItemsReport,
    )

    return [
        FileFormat(METRICS_FILE, '"forcebench"', ForceReport),
        FileFormat(METRICS_FILE, '"factuality"."scores"', FactualityReport),
        FileFormat(METRICS_FILE, '"factuality"."gold"', GoldReport),
        FileFormat(METRICS_FILE, '"factuality"."correlation"', CorrelationReport),
        FileFormat(
            METRICS_FILE,
            '"items"',
            ItemsReport,
            (
                "Its rows are flattened: each statistic is a key, its CI `<name>_lo` and "
                "`<name>_hi` (a count such as `n_gold` has none); `labels` and `confusion` "
                "(`[gold][predicted]` counts) only when the judge has a confusion matrix."
            ),
        ),
    ]


def policy_files() -> list[FileFormat]:
    """What `assay policies apply` writes under `policies/<name>/`, kind by kind."""
    from assay.core import rundir as d
    from assay.policies.claim_selective import _records as cs
    from assay.policies.custom import _records as custom
    from assay.policies.evidence_gate._records import GateDecisionRecord
    from assay.policies.fail_closed import _records as fc
    from assay.policies.fail_closed._certificate import Certificate

    return [
        FileFormat(d.CLAIMS_FILE, "claim_selective", cs.ClaimSelectiveClaimRecord),
        FileFormat(d.RESPONSES_FILE, "claim_selective", cs.ClaimSelectiveResponseRecord),
        FileFormat(d.CERTIFICATES_FILE, "claim_selective", cs.CertificateRecord),
        FileFormat(d.CLAIMS_FILE, "fail_closed", fc.FailClosedClaimRecord),
        FileFormat(d.RESPONSES_FILE, "fail_closed", fc.FailClosedResponseRecord),
        FileFormat(d.CERTIFICATES_FILE, "fail_closed", Certificate),
        FileFormat(d.GATE_DECISIONS_FILE, "evidence_gate", GateDecisionRecord),
        FileFormat(d.CLAIMS_FILE, "a kind of your own", custom.CustomClaimRecord),
        FileFormat(d.RESPONSES_FILE, "a kind of your own", custom.CustomResponseRecord),
    ]


def every_file() -> list[FileFormat]:
    """Every file the page lists, in the page's order."""
    return [*run_files(), *adjudication_files(), *metrics_parts(), *policy_files()]


def _referenced(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The models `model`'s fields hold (nested objects), in field order."""
    found: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        annotation = unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.append(annotation)
        for arg in get_args(annotation):
            visit(arg)

    for info in model.model_fields.values():
        visit(info.annotation)
    return found


def closure(models: list[type[BaseModel]]) -> list[type[BaseModel]]:
    """`models` and every model they hold, each once, in order of first use."""
    out: dict[type[BaseModel], None] = {}
    todo = list(models)
    while todo:
        model = todo.pop(0)
        if model not in out:
            out[model] = None
            todo += _referenced(model)
    return list(out)


def _doc(model: type[BaseModel]) -> str:
    doc = model.__doc__ or ""
    if model.__module__.startswith("pydantic"):
        return ""
    return "\n\n".join(escape(" ".join(p.split())) for p in doc.strip().split("\n\n") if p.strip())


def _title(model: type[BaseModel]) -> str:
    return f"`{model.__name__}`"


def _link(model: type[BaseModel]) -> str:
    return f"[{model.__name__}](#{slug(_title(model))})"


def _model_lines(model: type[BaseModel]) -> list[str]:
    lines = [f"### {_title(model)}", ""]
    if doc := _doc(model):
        lines += [doc, ""]
    extra = model.model_config.get("extra")
    if extra == "allow":
        lines += ["Keys this version does not know are kept when the file is rewritten.", ""]
    lines += table(rows(model, _link, null=NULL, unset="`null`"))
    return [*lines, ""]


def _file_lines(found: FileFormat, where: str) -> list[str]:
    note = f" {found.note}" if found.note else ""
    return [f"- {where}: {_link(found.model)}.{note}"]


INTRO = [
    "# File formats",
    "",
    "What a run directory holds, file by file, and every field of its records. "
    "Generated from the record, manifest, metrics and policy-output models by "
    "`python docs/gen_reference.py`; do not edit by hand.",
    "",
    "Record files are JSON Lines (one object a line, appended as work finishes); when "
    "two lines have the same key the later one wins. A field shown as `null` by "
    "default may be absent from older files.",
    "",
]


def formats_page() -> str:
    """The whole `reference/file-formats.md`."""
    from assay.core.rundir import DIGESTS_KEY, POLICIES_DIR

    lines = [*INTRO, "## Files", "", "Written by `assay run`:", ""]
    for f in run_files():
        lines += _file_lines(f, f"`{f.name}`")
    lines += ["", "Written by a person, never by `assay run` (its records stay untouched):", ""]
    for f in adjudication_files():
        lines += _file_lines(f, f"`{f.name}`")
    lines += ["", "`metrics.json`, rebuilt from the record files by `assay recompute`:", ""]
    for f in metrics_parts():
        lines += _file_lines(f, f"`{f.where}`")
    lines.append(f'- `"{DIGESTS_KEY}"`: record file -> the sha256 the metrics were computed from.')
    lines += ["", f"Written by `assay policies apply` under `{POLICIES_DIR}/<name>/`:", ""]
    for f in policy_files():
        lines += _file_lines(f, f"`{f.name}` ({f.where})")
    lines += ["", "## Models", ""]
    top = [f.model for f in every_file()]
    for model in closure(top):
        lines += _model_lines(model)
    return "\n".join(lines).rstrip("\n") + "\n"


def _in_published_schema() -> set[str]:
    """The models fail_closed's committed certificate JSON schema embeds: a description
    would change that published file, so they are not required to have one (yet)."""
    from assay.policies.fail_closed._certificate import certificate_json_schema

    schema = certificate_json_schema()
    return {str(schema.get("title", "Certificate")), *schema.get("$defs", {})}


def described_models() -> list[type[BaseModel]]:
    """Every model the page shows, less those of the published certificate schema: each
    field must have a description."""
    published = _in_published_schema()
    top = [f.model for f in every_file()]
    return [m for m in closure(top) if m.__name__ not in published]
