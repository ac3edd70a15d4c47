"""The run spec (TOML): datasets, judges as a models x prompts matrix, baselines, policy.

Paths to datasets and prompt directories resolve relative to the spec file; the output
directory resolves relative to the working directory, like other evaluation tools.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from assay.core.outcomes import Status
from assay.errors import SpecError

MIN_BOOTSTRAP = 100
POOLED = "all"  # the dataset name of pooled metric rows; no dataset may take it


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    name: str | None = Field(default=None, description="Defaults to the file's stem.")
    path: str = Field(description="A .jsonl/.csv file, or builtin:NAME.")

    _name_ok = field_validator("name")(_not_pooled)

    @model_validator(mode="after")
    def _default_name_ok(self) -> Self:
        _stem_not_pooled(self.name, self.path)
        return self


class ModelDefaults(_Strict):
    """Defaults for every model judge; each [[judges]] block may override any of them."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int = Field(default=1024, ge=1)
    seed: int | None = None
    stop: list[str] | None = None
    timeout_s: float = Field(default=60.0, gt=0.0)
    max_concurrency: int = Field(default=16, ge=1, le=4096)
    max_attempts: int = Field(default=6, ge=1, le=50)
    initial_wait_s: float = Field(default=1.0, ge=0.0)
    max_wait_s: float = Field(default=60.0, ge=0.0)
    structured_output: str = Field(default="auto", pattern="^(auto|json_schema|json_object|off)$")


class EndpointOverrides(_Strict):
    """How to reach a model and decode; unset fields fall back to [defaults]."""

    api_base: str | None = None
    api_key_env: str | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    stop: list[str] | None = None
    timeout_s: float | None = Field(default=None, gt=0.0)
    max_concurrency: int | None = Field(default=None, ge=1, le=4096)
    max_attempts: int | None = Field(default=None, ge=1, le=50)
    structured_output: str | None = Field(
        default=None, pattern="^(auto|json_schema|json_object|off)$"
    )


class JudgeMatrixSpec(EndpointOverrides):
    """Every model in `models` crossed with every prompt in `prompts`."""

    models: list[str] = Field(min_length=1)
    prompts: list[str] = Field(min_length=1)
    name: str | None = Field(default=None, description="Label used instead of the model id.")
    samples: int = Field(default=1, ge=1, le=100, description="Repeated samples per item.")

    @model_validator(mode="after")
    def _names_need_one_model(self) -> JudgeMatrixSpec:
        if self.name and len(self.models) > 1:
            raise ValueError("`name` can only be set when `models` has one entry")
        return self


class AnswersDatasetSpec(_Strict):
    name: str | None = Field(default=None, description="Defaults to the file's stem.")
    path: str = Field(description="Answers file, or builtin:NAME.")
    format: str = Field(
        default="auto", description="auto | jsonl | medscore-input | expertqa | wice"
    )

    _name_ok = field_validator("name")(_not_pooled)

    @model_validator(mode="after")
    def _default_name_ok(self) -> Self:
        _stem_not_pooled(self.name, self.path)
        return self


DECOMPOSER_KINDS = ("sentence", "llm", "given")


class DecomposerSpec(EndpointOverrides):
    """How answers become claims: by sentence, by an LLM prompt, or as given by the data."""

    kind: str = Field(default="sentence", pattern=f"^({'|'.join(DECOMPOSER_KINDS)})$")
    model: str | None = None
    prompt: str = "decompose-conditional@1"
    name: str | None = None

    @model_validator(mode="after")
    def _llm_needs_model(self) -> DecomposerSpec:
        if self.kind == "llm" and not self.model:
            raise ValueError("an llm decomposer needs `model`")
        return self


VERIFIER_KINDS = ("internal", "context", "retrieval", "nli", "nli-local", "overlap")


class VerifierSpec(EndpointOverrides):
    """One verifier; several in one spec compare verifiers on the same claims."""

    kind: Literal["internal", "context", "retrieval", "nli", "nli-local", "overlap"]
    model: str | None = Field(default=None, description="LLM id, or hf-nli/<dir> for nli-local.")
    prompt: str | None = Field(default=None, description="Default depends on kind.")
    parser: Literal["strict", "legacy", "legacy-factscore", "legacy-medscore"] = Field(
        default="strict",
        description="strict, or a published tool's True/False rule for comparability "
        "(legacy = legacy-factscore).",
    )
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    corpus: str | None = Field(default=None, description="Passages JSONL (retrieval).")
    top_k: int = Field(default=10, ge=1, le=1000)
    dense_model: str | None = Field(default=None, description="Local embedding model dir.")
    batch_size: int = Field(default=32, ge=1, le=4096)
    label_map: dict[str, int] | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _kind_needs(self) -> VerifierSpec:
        if self.kind not in ("overlap",) and not self.model:
            raise ValueError(f"a {self.kind} verifier needs `model`")
        if self.kind == "retrieval" and not self.corpus:
            raise ValueError("a retrieval verifier needs `corpus`")
        return self


class FactualitySpec(_Strict):
    """Decompose-then-verify: answers -> claims -> verdicts -> factuality scores."""

    datasets: list[AnswersDatasetSpec] = Field(min_length=1)
    decomposer: DecomposerSpec = Field(default_factory=DecomposerSpec)
    verifiers: list[VerifierSpec] = Field(min_length=1)
    length_penalty: str | None = Field(default=None, pattern="^factscore$")


class BaselineSpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class FailurePolicy(_Strict):
    """Like Inspect's fail_on_error: above this many failed judgments the run is `failed`."""

    max_failed_fraction: float = Field(default=0.05, ge=0.0, le=1.0)
    max_failed: int | None = Field(default=None, ge=0)
    statuses: list[Status] = Field(
        default_factory=lambda: [Status.API_ERROR],
        description="Which statuses count as failed judgments for this policy.",
    )

    def limit(self, planned: int) -> int:
        by_fraction = int(self.max_failed_fraction * planned)
        return by_fraction if self.max_failed is None else min(by_fraction, self.max_failed)


class RunSpec(_Strict):
    name: str = "run"
    description: str = ""
    output_dir: str | None = Field(default=None, description="Default: runs/<name>.")
    prompt_dirs: list[str] = Field(default_factory=list)
    bootstrap: int = Field(
        default=1000, ge=0, description="Bootstrap resamples for CIs; 0 = no CI."
    )
    seed: int = Field(default=0, description="Seed for bootstrap resampling.")
    datasets: list[DatasetSpec] = Field(default_factory=list)
    defaults: ModelDefaults = Field(default_factory=ModelDefaults)
    judges: list[JudgeMatrixSpec] = Field(default_factory=list)
    baselines: list[BaselineSpec] = Field(default_factory=list)
    failure: FailurePolicy = Field(default_factory=FailurePolicy)
    factuality: FactualitySpec | None = None

    @field_validator("bootstrap")
    @classmethod
    def _bootstrap_zero_or_enough(cls, value: int) -> int:
        # a handful of resamples gives a CI that looks precise and is not
        if 0 < value < MIN_BOOTSTRAP:
            raise ValueError(f"bootstrap must be 0 (no CI) or at least {MIN_BOOTSTRAP}")
        return value

    @model_validator(mode="after")
    def _has_some_work(self) -> RunSpec:
        judged = bool(self.judges or self.baselines)
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


def load_spec(path: str | Path) -> LoadedSpec:
    p = Path(path)
    if not p.is_file():
        raise SpecError("run spec not found", file=p)
    data = p.read_bytes()
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SpecError("spec is not valid UTF-8", file=p) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", file=p) from None
    try:
        spec = RunSpec.model_validate(raw)
    except ValidationError as exc:
        # an unknown key (a typo) explains a "missing field" error, so report it first
        err = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        field = _loc(err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise SpecError(msg, file=p, field=field or None) from None
    return LoadedSpec(
        spec=spec,
        path=str(p),
        base_dir=str(p.resolve().parent),
        sha256=hashlib.sha256(data).hexdigest(),
        raw=raw,
    )


def _loc(parts: tuple[int | str, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
