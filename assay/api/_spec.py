"""A run spec from whatever a Python caller has: a TOML path, a `RunSpec`, or a dict.

A spec built in Python has no file, so its relative paths (datasets, prompt directories,
corpora) resolve against the working directory, and its identity for resume is the
SHA-256 of its canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import SpecError
from assay.runs import LoadedSpec, RunSpec, load_spec
from assay.runs._spec import _loc

PYTHON_SPEC = "<python spec>"  # stands for the file in error messages and the manifest

SpecLike = str | Path | RunSpec | Mapping[str, Any] | LoadedSpec


def to_loaded_spec(spec: SpecLike, *, base_dir: str | Path | None = None) -> LoadedSpec:
    """A `LoadedSpec` the runner accepts; a path is read exactly as `assay run` reads it."""
    if isinstance(spec, LoadedSpec):
        return spec
    if isinstance(spec, str | Path):
        return load_spec(spec)
    if isinstance(spec, RunSpec):
        raw = spec.model_dump(mode="json", exclude_unset=True)
    elif isinstance(spec, Mapping):
        raw = json.loads(json.dumps(spec, default=str))  # a plain, JSON-safe copy
    else:
        raise SpecError(
            f"spec: expected a TOML path, a RunSpec or a dict, got {type(spec).__name__}"
        )
    return LoadedSpec(
        spec=_validated(raw),
        path=PYTHON_SPEC,
        base_dir=str(Path(base_dir or Path.cwd()).resolve()),
        sha256=hashlib.sha256(json.dumps(raw, sort_keys=True).encode("utf-8")).hexdigest(),
        raw=raw,
    )


def _validated(raw: dict[str, Any]) -> RunSpec:
    """Validate as `load_spec` does, with the same one-line error naming the field."""
    try:
        return RunSpec.model_validate(raw)
    except ValidationError as exc:
        err = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise SpecError(msg, file=PYTHON_SPEC, field=_loc(err["loc"]) or None) from None
