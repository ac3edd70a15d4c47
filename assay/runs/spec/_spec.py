"""The run spec (TOML): datasets, judges as a models x prompts matrix, baselines, policy.

Paths to datasets and prompt directories resolve relative to the spec file; the output
directory resolves relative to the working directory, like other evaluation tools.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from assay._limits import MAX_BOOTSTRAP
from assay.core.calibration import CalibrationOptions
from assay.core.outcomes import Status
from assay.core.registry import IMPORTERS
from assay.core.settings import ModelDefaults
from assay.datasets import Delimiter, ItemsDatasetOptions
from assay.errors import AssayError, SpecError, first_problem
from assay.inputs import PathText, decode_text
from assay.juries import JuryBlocks
from assay.models._ray_options import ExecutorOptions
from assay.runs.spec._blocks import BaselineSpec as BaselineSpec
from assay.runs.spec._blocks import ComponentBlock as ComponentBlock
from assay.runs.spec._blocks import (
    ComponentRef,
    DecomposerSpec,
    JudgeSpec,
    Strict,
    VerifierSpec,
    baseline_ref,
    block_ref,
    check_refs,
    registered,
)
from assay.runs.spec._blocks import JudgeMatrixSpec as JudgeMatrixSpec
from assay.runs.spec._gate import GateSpec, gate_retrieval

MIN_BOOTSTRAP = 100
POOLED = "all"  # the dataset name of pooled metric rows; no dataset may take it


_Strict = Strict  # every spec table refuses keys it does not know


def _not_pooled(name: str | None) -> str | None:
    if name == POOLED:
        raise ValueError(f"dataset name {POOLED!r} is reserved for pooled metrics; pick another")
    return name


def _stem_not_pooled(name: str | None, path: str) -> None:
    """A dataset without `name` is named after its file (or folder): `all.jsonl` would be
    taken for the pooled rows."""
    if name is None and not path.startswith("builtin:"):
        p = Path(path)
        if POOLED in (p.stem, p.name):
            raise ValueError(
                f"this dataset would be named {POOLED!r}, which is reserved for pooled "
                "metrics; set `name`"
            )


class DatasetSpec(_Strict):
    """A `[[datasets]]` block of ForceBench pairs (the default kind)."""

    kind: Literal["pairs"] = Field(
        default="pairs", description="ForceBench pairs; `items` is the other dataset kind."
    )
    name: str | None = Field(default=None, description="Defaults to the file's stem.")
    path: PathText = Field(description="A .jsonl/.csv/.tsv file, or builtin:NAME.")
    delimiter: Delimiter | None = Field(
        default=None,
        description="CSV/TSV delimiter; default: tab for .tsv, else detected (`,` `;` tab `|`).",
    )

    _name_ok = field_validator("name")(_not_pooled)

    @model_validator(mode="after")
    def _default_name_ok(self) -> Self:
        _stem_not_pooled(self.name, self.path)
        return self


class ItemsDatasetSpec(ItemsDatasetOptions):
    """A `[[datasets]] kind = "items"` block: any columns, optional gold and raters."""

    path: PathText = Field(description="A .jsonl/.ndjson, .csv or .parquet file.")

    _name_ok = field_validator("name")(_not_pooled)

    @model_validator(mode="after")
    def _default_name_ok(self) -> Self:
        _stem_not_pooled(self.name, self.path)
        return self


DATASET_KINDS = ("pairs", "items")


def _dataset_kind(value: Any) -> str:
    """The tag of a `[[datasets]]` block; an unknown kind is refused by name below."""
    kind = value.get("kind", "pairs") if isinstance(value, dict) else getattr(value, "kind", "")
    return kind if kind in DATASET_KINDS else "unknown"


class _UnknownDatasetKind(BaseModel):
    """Any block whose `kind` is not a dataset kind: refused, naming the kinds."""

    kind: str

    @field_validator("kind")
    @classmethod
    def _refuse(cls, kind: str) -> str:
        raise ValueError(f"unknown dataset kind {kind!r}; known: {', '.join(DATASET_KINDS)}")


DatasetBlock = Annotated[
    Annotated[DatasetSpec, Tag("pairs")]
    | Annotated[ItemsDatasetSpec, Tag("items")]
    | Annotated[_UnknownDatasetKind, Tag("unknown")],
    Discriminator(_dataset_kind),
]


class AnswersDatasetSpec(DatasetSpec):
    """An answers dataset of `[factuality]`, read by the importer `format` names."""

    path: PathText = Field(description="Answers file, or builtin:NAME.")
    format: str = Field(
        default="auto", description="A registered importer: auto, jsonl, medscore-input, ..."
    )
    evidence_file: PathText | None = Field(
        default=None,
        description="medscore-input: MedScore's `{id: evidence}` JSON file, relative to the spec.",
    )

    @field_validator("format")
    @classmethod
    def _known_format(cls, fmt: str) -> str:
        return registered(IMPORTERS, fmt)


GIVEN_IN_PYTHON = "given_in_python"  # validation context: components passed as objects


def given_in_python(info: ValidationInfo) -> frozenset[str]:
    """Which of judges/verifiers `assay.run(...)` was given as objects: then the spec
    may have none of its own."""
    return frozenset((info.context or {}).get(GIVEN_IN_PYTHON, ()))


class FactualitySpec(_Strict):
    """Decompose-then-verify: answers -> claims -> verdicts -> factuality scores."""

    datasets: list[AnswersDatasetSpec] = Field(
        min_length=1, description="The answers to decompose and verify."
    )
    decomposer: DecomposerSpec = Field(
        default_factory=DecomposerSpec, description="How answers become claims."
    )
    verifiers: list[VerifierSpec] = Field(
        default_factory=list,
        validate_default=True,
        description="Each verifier scores every claim; at least one.",
    )
    length_penalty: str | None = Field(
        default=None,
        pattern="^factscore$",
        description="factscore: FActScore's length penalty on each answer's score.",
    )

    @field_validator("verifiers")
    @classmethod
    def _some_verifier(cls, value: list[VerifierSpec], info: ValidationInfo) -> list[Any]:
        if not value and "verifiers" not in given_in_python(info):
            raise ValueError("[factuality] needs at least one [[factuality.verifiers]] entry")
        return value


class FailurePolicy(_Strict):
    """Like Inspect's fail_on_error: above this many failed judgments the run is `failed`."""

    max_failed_fraction: float = Field(
        default=0.05, ge=0.0, le=1.0, description="Share of planned judgments that may fail."
    )
    max_failed: int | None = Field(
        default=None, ge=0, description="Count that may fail; the lower of the two limits wins."
    )
    statuses: list[Status] = Field(
        default_factory=lambda: [Status.API_ERROR],
        description="Which statuses count as failed judgments for this policy.",
    )

    def limit(self, planned: int) -> int:
        by_fraction = int(self.max_failed_fraction * planned)
        return by_fraction if self.max_failed is None else min(by_fraction, self.max_failed)


class RunSpec(_Strict):
    """The whole run spec: its top-level keys and a table for each part of the run."""

    name: str = Field(default="run", description="The run's name, recorded in the manifest.")
    description: str = Field(default="", description="Free text, recorded in the manifest.")
    output_dir: PathText | None = Field(default=None, description="Default: runs/<name>.")
    prompt_dirs: list[PathText] = Field(
        default_factory=list,
        description="Folders of your own .prompt files, relative to the spec.",
    )
    bootstrap: int = Field(
        default=1000,
        ge=0,
        description=f"Bootstrap resamples for CIs; 0 = no CI, else {MIN_BOOTSTRAP} to "
        f"{MAX_BOOTSTRAP}.",
    )
    seed: int = Field(default=0, description="Seed for bootstrap resampling.")
    records_parquet: bool = Field(
        default=False,
        description="Also write a Parquet copy of each record file at the end (needs pyarrow).",
    )
    bundle_data: bool = Field(
        default=False,
        description="Copy each dataset file into the run directory (snapshot/data/) when "
        "the run starts, so it can be audited and re-run from the directory alone.",
    )
    max_cost_usd: float | None = Field(
        default=None,
        ge=0,
        description="Spending cap of the whole run in USD: no request is sent whose "
        "worst-case cost (estimated prompt tokens + max_tokens at the model's prices) could "
        "take the run's spend, every session counted, over it (`--max-cost-usd` overrides).",
    )
    max_requests: int | None = Field(
        default=None,
        ge=1,
        description="Cap on the HTTP requests the run sends, every session counted "
        "(`--max-requests` overrides).",
    )
    datasets: list[DatasetBlock] = Field(
        default_factory=list, description="What the judges and baselines judge."
    )
    defaults: ModelDefaults = Field(
        default_factory=ModelDefaults, description="Model settings every model block inherits."
    )
    judges: list[JudgeSpec] = Field(default_factory=list, description="The judges to run.")
    baselines: list[BaselineSpec] = Field(
        default_factory=list, description="Model-free judges to compare against."
    )
    juries: JuryBlocks = Field(
        default_factory=list, description="Judges voting together, from their recorded verdicts."
    )
    failure: FailurePolicy = Field(
        default_factory=FailurePolicy, description="When failed judgments fail the run."
    )
    calibration: CalibrationOptions = Field(
        default_factory=CalibrationOptions,
        description="How judges' label probabilities are scored against gold: ECE bins "
        "and the split recalibration is fitted on.",
    )
    factuality: FactualitySpec | None = Field(
        default=None, description="Decompose answers into claims and verify each one."
    )
    gate: GateSpec | None = Field(
        default=None, description="Score each question's retrieved evidence with a reranker."
    )
    executor: ExecutorOptions | None = Field(
        default=None, description='Where local models run: kind = "local" (default) or "ray".'
    )
    policies: list[dict[str, Any]] = Field(
        default_factory=list,
        description="[[policies]] blocks for `assay policies apply` (checked at load).",
    )

    @field_validator("bootstrap")
    @classmethod
    def _bootstrap_zero_or_enough(cls, value: int) -> int:
        # a handful of resamples gives a CI that looks precise and is not; too many
        # only cost memory and minutes (see assay._limits)
        if 0 < value < MIN_BOOTSTRAP or value > MAX_BOOTSTRAP:
            raise ValueError(
                f"bootstrap must be 0 (no CI) or from {MIN_BOOTSTRAP} to {MAX_BOOTSTRAP}, "
                f"got {value}"
            )
        return value

    @model_validator(mode="after")
    def _has_some_work(self, info: ValidationInfo) -> RunSpec:
        judged = bool(self.judges or self.baselines) or "judges" in given_in_python(info)
        if self.datasets and not judged:
            raise ValueError("[[datasets]] needs at least one [[judges]] or [[baselines]] entry")
        if judged and not self.datasets:
            raise ValueError("[[judges]] and [[baselines]] need at least one [[datasets]] entry")
        if not self.datasets and self.factuality is None:
            raise ValueError("a run needs [[datasets]] with judges, or a [factuality] section")
        return self


class LoadedSpec(BaseModel):
    spec: RunSpec
    path: str
    base_dir: str
    sha256: str
    raw: dict[str, Any]

    def output_dir(self, override: str | Path | None = None) -> Path:
        if override is not None:
            return Path(override)
        return Path(self.spec.output_dir or f"runs/{self.spec.name}")


def validate_spec(
    raw: dict[str, Any], *, where: str, given_in_python: Collection[str] = ()
) -> RunSpec:
    """The spec model of parsed TOML (or a dict from Python); one error naming `where`
    and the field. `given_in_python`: "judges"/"verifiers" passed as objects."""
    try:
        spec = RunSpec.model_validate(raw, context={GIVEN_IN_PYTHON: set(given_in_python)})
    except ValidationError as exc:
        problem = first_problem(exc)  # an unknown key (a typo) first: it explains the rest
        raise SpecError(problem.message, file=where, field=_loc(problem.loc) or None) from None
    check_component_params(spec, where)
    gate_retrieval(spec, where)
    if spec.policies:  # assay.policies loads every kind: only for a spec that has blocks
        from assay.policies.engine._spec import parse_policies  # each kind's parser checks

        parse_policies(spec.policies, file=where)
    return spec


def load_spec(path: str | Path, *, given_in_python: Collection[str] = ()) -> LoadedSpec:
    """Read and validate a TOML run spec; errors name the file and the field."""
    p = Path(path)
    if p.is_dir():
        raise SpecError("is a directory; pass a run spec (.toml) file", file=p)
    if not p.is_file():
        raise SpecError("run spec not found", file=p)
    data = p.read_bytes()
    raw = parse_toml(data, p)
    spec = validate_spec(raw, where=str(p), given_in_python=given_in_python)
    check_prompt_dirs(spec, p.resolve().parent, str(p))
    return LoadedSpec.model_construct(  # validated above; again would lose the context
        spec=spec,
        path=str(p),
        base_dir=str(p.resolve().parent),
        sha256=hashlib.sha256(data).hexdigest(),
        raw=raw,
    )


def parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    """The TOML document in `data` (a UTF-8 byte-order mark is dropped, as editors on
    Windows write one); one error naming the file otherwise."""
    try:
        return tomllib.loads(decode_text(data, path))
    except AssayError as exc:
        raise SpecError(exc.message, file=path, line=exc.line) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", file=path) from None


def check_prompt_dirs(spec: RunSpec, base: Path, where: str) -> None:
    """Every `prompt_dirs` folder exists, checked at load (not when a judge first needs
    a prompt): the error names the folder and the field."""
    for i, folder in enumerate(spec.prompt_dirs):
        found = base / folder
        if not found.is_dir():
            what = "is not a folder" if found.exists() else "folder not found"
            raise SpecError(f"{what}: {found}", file=where, field=f"prompt_dirs[{i}]")


def judge_refs(spec: RunSpec) -> list[ComponentRef]:
    """The `[[judges]]` then `[[baselines]]` blocks, in spec order."""
    out = [block_ref(f"judges[{i}]", b) for i, b in enumerate(spec.judges)]
    return out + [baseline_ref(i, b) for i, b in enumerate(spec.baselines)]


def decomposer_ref(fact: FactualitySpec) -> ComponentRef:
    return block_ref("factuality.decomposer", fact.decomposer)


def verifier_refs(fact: FactualitySpec) -> list[ComponentRef]:
    return [block_ref(f"factuality.verifiers[{i}]", v) for i, v in enumerate(fact.verifiers)]


def component_refs(spec: RunSpec) -> list[ComponentRef]:
    """Every judge, baseline, decomposer and verifier block of a spec, in build order."""
    fact = spec.factuality
    if fact is None:
        return judge_refs(spec)
    return [*judge_refs(spec), decomposer_ref(fact), *verifier_refs(fact)]


def check_component_params(spec: RunSpec, spec_path: str | None) -> None:
    """Each block's parameters against its kind's factory, before anything is built."""
    check_refs(component_refs(spec), spec_path)


def _loc(parts: tuple[int | str, ...]) -> str:
    out = ""
    if parts[:1] == ("datasets",) and len(parts) > 2 and isinstance(parts[1], int):
        parts = (*parts[:2], *parts[3:])  # the union tag of a dataset block is not a key
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
