"""The policy reference pages (docs/reference/policies/) against the code they define, and
the code's pointers into the docs.

- Every status, action, outcome, rule and reason code a kind can write (its enums and
  Literal types), every metric it computes and every configuration key (with its
  default) is on the kind's page, so a value added in the code without its definition
  fails here.
- No file under assay/ cites a section of a document outside the repository ("§4.9",
  "FC-8", an issue number, ...): code points at the reference pages instead.
- Every `docs/<page>.md#<anchor>` written in assay/ names a page that exists and a
  heading of it (anchors as Python-Markdown's toc extension makes them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from assay.core.decisions import ClaimDecision, GateOutcome, ResponseOutcome
from assay.policies.claim_selective import _config as cs_config
from assay.policies.claim_selective import _metrics as cs_metrics
from assay.policies.claim_selective import _records as cs_records
from assay.policies.evidence_gate import _config as eg_config
from assay.policies.evidence_gate import _records as eg_records
from assay.policies.evidence_gate._metrics import metric_values
from assay.policies.fail_closed import _config as fc_config
from assay.policies.fail_closed import _lint as fc_lint
from assay.policies.fail_closed import _metrics as fc_metrics
from assay.policies.fail_closed import _records as fc_records
from assay.policies.fail_closed import _render as fc_render
from assay.policies.fail_closed._certificate import UnverifiedReason

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "reference" / "policies"
CS, EG, FC = "claim-selective.md", "evidence-gate.md", "fail-closed.md"

CITATION = re.compile(
    r"§|\bFC-\d|\bC-\d|\bT-[A-Z]?\d|\bF-\d|\b[Ii]ssue \d+|polic(?:y|ies) spec(?:ification)?\b"
)
"""A section, invariant or test number of the outside policies specification, or an
issue number: what a reader of the repository cannot look up."""

FROZEN = re.compile(r"/lexicons/[\w-]+@\d+\.toml$")
"""Released lexicons are exempt: their bytes are hashed into every run that reads them
(`lexicon_digest`), so their text, old citations and links included, changes only with a
new version file."""
DOCS_LINK = re.compile(r"\bdocs/[\w./-]+?\.md(?:#[\w-]+)?")


def values(kind: Any) -> list[str]:
    """The values of an enum or a Literal type."""
    if isinstance(kind, type) and issubclass(kind, Enum):
        return [str(member.value) for member in kind]
    return [str(value) for value in get_args(kind)]


def page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def missing(text: str, names: Iterable[str]) -> list[str]:
    """Names not written as inline code (`name`) on the page."""
    return [name for name in names if f"`{name}`" not in text]


CODES = {
    CS: [
        ClaimDecision,
        ResponseOutcome,
        cs_records.ClaimStatus,
        cs_records.NativeAction,
        cs_records.ClaimReason,
        cs_records.ResponseReason,
        cs_records.LinkRole,
        cs_records.IgnoredReference.model_fields["reason"].annotation,
    ],
    EG: [
        GateOutcome,
        eg_config.GateRule,
        eg_config.NativeDecision,
        eg_config.RefusalReason,
        eg_config.Normalization,
        eg_records.PoolUsed,
    ],
    FC: [
        fc_records.RenderState,
        fc_records.Reason,
        fc_records.ResponseReason,
        fc_config.Mode,
        UnverifiedReason,
        fc_records.ReferenceNote.model_fields["code"].annotation,
    ],
}


@pytest.mark.parametrize("name", sorted(CODES))
def test_every_code_value_is_defined_on_its_page(name: str) -> None:
    text = page(name)
    for kind in CODES[name]:
        assert not missing(text, values(kind)), (name, kind, missing(text, values(kind)))


def test_every_fail_closed_decision_outcome_and_flag_is_on_the_page() -> None:
    """fail_closed writes part of the common vocabulary (never `qualify` or `conflict`)."""
    common = [str(v) for v in fc_records.COMMON_DECISION.values()]
    outcomes = [str(v) for v in fc_render.OUTCOME.values()]
    native = [str(v) for v in fc_records.NATIVE_OUTCOME.values()]
    flags = [f"contains:{word}" for word in fc_lint.JOINERS] + ["too_long"]
    assert not missing(page(FC), common + outcomes + native + flags)


def test_every_metric_is_defined_on_its_page() -> None:
    assert not missing(page(CS), cs_metrics.METRIC_NAMES)
    assert not missing(page(EG), metric_values([], Fraction(1, 2)))
    assert not missing(page(FC), fc_metrics.METRIC_NAMES)


def _rows(text: str) -> dict[str, str]:
    """Table rows by their first cell's inline-code key: "| `tau` | ..." -> the row."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w.]+)` \|.*$", text, re.M)}


def _shown(default: object) -> str | None:
    """A scalar default as the page writes it; None for what a table cannot show."""
    if isinstance(default, Enum):
        default = default.value
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, str):
        return f'"{default}"'
    if isinstance(default, int | float):
        return str(default)
    return None


def _keys(model: type[BaseModel]) -> dict[str, str | None]:
    """Every configuration key of a block (not `kind`, the block's given kind) with its
    scalar default as shown."""
    return {
        key: _shown(field.default) for key, field in model.model_fields.items() if key != "kind"
    }


CONFIGS: dict[str, list[type[BaseModel]]] = {
    CS: [cs_config.ClaimSelectiveConfig],
    EG: [eg_config.EvidenceGateConfig],
    FC: [fc_config.FailClosedConfig, fc_config.Caps],
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_configuration_key_has_a_row_with_its_default(name: str) -> None:
    rows = _rows(page(name))
    for model in CONFIGS[name]:
        for key, default in _keys(model).items():
            assert key in rows, (name, key)
            if default is not None:
                assert f"| {default}" in rows[key] or f"`{default}`" in rows[key], (
                    name,
                    key,
                    default,
                    rows[key],
                )


@pytest.mark.parametrize(
    ("key", "model"),
    [
        ("thresholds", cs_config.SelectorThresholds),
        ("certificate_standard", cs_config.CertificateStandard),
    ],
)
def test_nested_claim_selective_defaults_are_on_their_row(key: str, model: type[BaseModel]) -> None:
    row = _rows(page(CS))[key]
    for name, field in model.model_fields.items():
        assert f'`{name} = "{field.default}"`' in row, (key, name, field.default)


def test_default_families_are_on_the_page() -> None:
    text = page(CS)
    for family, thresholds in cs_config.DEFAULT_FAMILIES.items():
        row = next((r for r in text.splitlines() if r.startswith(f"| `{family}`")), "")
        cells = [c.strip() for c in row.split("|")[2:-1]]
        expected = [str(float(thresholds[n])) for n in cs_config.THRESHOLD_NAMES]
        assert [str(float(c)) for c in cells] == expected, (family, row)
    for intent, family in cs_config.DEFAULT_INTENT_FAMILIES.items():
        assert re.search(rf"`{intent}`[^.;]*→\s+`{family}`", text), (intent, family)


def test_a_claim_record_refuses_a_reason_the_page_does_not_define() -> None:
    """The Literal types are enforced where records are built, so a reason code added in
    the decision code without its definition fails every test that decides a claim."""
    stamp = cs_records.PolicyStamp(policy_id="p", policy_version=1, policy_sha256="0")
    record = {
        **cs_records.Stamped.stamp_fields(stamp),
        "dataset": "d",
        "answer_id": "a",
        "native": "full",
        "outcome": "answer_full",
        "reason": "made_up",
        "n_claims": 0,
        "status_counts": {},
        "family": None,
    }
    with pytest.raises(ValidationError, match="reason"):
        cs_records.ClaimSelectiveResponseRecord.model_validate(record)
    valid = cs_records.ClaimSelectiveResponseRecord.model_validate(
        {**record, "reason": "all_required_certified"}
    )
    assert valid.reason == "all_required_certified"


def _files() -> list[Path]:
    """The text files under assay/, released lexicons left out."""
    return sorted(
        p
        for p in (ROOT / "assay").rglob("*")
        if p.is_file() and _is_text(p) and not FROZEN.search(p.as_posix())
    )


def _is_text(path: Path) -> bool:
    suffixes = {".py", ".toml", ".md", ".txt", ".json", ".prompt", ".html", ".js", ".yml", ""}
    return path.suffix in suffixes and "__pycache__" not in path.parts


OUTSIDE = re.compile(r"§|\b[Ii]ssue \d+|polic(?:y|ies) spec(?:ification)?\b")
"""Outside assay/ (tests, benchmarks, docs, configuration): a section sign, an issue
number or the outside specification. Test fixtures keep their own names (`C-1`, `F-2`),
which the repository defines."""


def _repository_files() -> list[Path]:
    """Text files of the repository outside assay/ that a reader sees: tests, benchmarks,
    docs, examples, the README and the configuration (this test file left out: it spells
    the patterns)."""
    found = [ROOT / name for name in ("README.md", "mkdocs.yml", "pyproject.toml")]
    for folder in ("tests", "benchmarks", "docs", "examples", ".ci"):
        found += [p for p in (ROOT / folder).rglob("*") if p.is_file() and _is_text(p)]
    return sorted(p for p in found if p.exists() and p != Path(__file__).resolve())


def test_nothing_in_the_repository_cites_an_issue_or_an_outside_section() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}"
        for path in _repository_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "\n".join(found)


def test_no_code_cites_a_document_outside_the_repository() -> None:
    found = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CITATION.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def slug(heading: str) -> str:
    """Python-Markdown's toc slugify of a heading's text (code and link markup removed)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    """The heading anchors of a page (outside fenced blocks); a repeated one gets _1, _2."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}_{count}")
    return out


def test_slug_is_the_toc_extension_s() -> None:
    assert slug("Claim statuses") == "claim-statuses"
    assert (
        slug("The apply layer (`assay policies apply`)") == "the-apply-layer-assay-policies-apply"
    )
    assert slug("Ids and numbers only, never text") == "ids-and-numbers-only-never-text"


def test_every_docs_link_in_the_code_names_a_page_and_anchor_that_exist() -> None:
    broken = []
    for path in _files():
        text = path.read_text(encoding="utf-8")
        for link in sorted(set(DOCS_LINK.findall(text))):
            target, _, anchor = link.partition("#")
            page_path = ROOT / target
            if not page_path.is_file():
                broken.append(f"{path.relative_to(ROOT)}: {link} (no such page)")
            elif anchor and anchor not in anchors(page_path):
                broken.append(f"{path.relative_to(ROOT)}: {link} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_code_points_at_each_policy_page() -> None:
    """The pointers that replaced the citations are there (one per kind at least)."""
    linked = {
        link.partition("#")[0]
        for path in _files()
        for link in DOCS_LINK.findall(path.read_text(encoding="utf-8"))
    }
    for name in (CS, EG, FC):
        assert f"docs/reference/policies/{name}" in linked, name
