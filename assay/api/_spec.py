"""A run spec from whatever a Python caller has: a TOML path, a `RunSpec`, or a dict.

A spec built in Python has no file, so its relative paths (datasets, prompt directories,
corpora) resolve against the working directory, and its identity for resume is the
SHA-256 of its canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from assay.errors import SpecError
from assay.runs import LoadedSpec, RunSpec, load_spec
from assay.runs.spec._spec import check_prompt_dirs, validate_spec

PYTHON_SPEC = "<python spec>"  # stands for the file in error messages and the manifest

SpecLike = str | Path | RunSpec | Mapping[str, Any] | LoadedSpec


def to_loaded_spec(
    spec: SpecLike, *, base_dir: str | Path | None = None, given_in_python: Collection[str] = ()
) -> LoadedSpec:
    """A `LoadedSpec` the runner accepts; a path is read exactly as `assay run` reads it.

    `given_in_python` ("judges", "verifiers"): what the caller passes as objects, so the
    spec need not name any of its own."""
    if isinstance(spec, LoadedSpec):
        return spec
    if isinstance(spec, str | Path):
        return load_spec(spec, given_in_python=given_in_python)
    if isinstance(spec, RunSpec):
        raw = spec.model_dump(mode="json", exclude_unset=True)
    elif isinstance(spec, Mapping):
        raw = json.loads(json.dumps(spec, default=str))  # a plain, JSON-safe copy
    else:
        raise SpecError(
            f"spec: expected a TOML path, a RunSpec or a dict, got {type(spec).__name__}"
        )
    base = Path(base_dir or Path.cwd()).resolve()
    checked = validate_spec(raw, where=PYTHON_SPEC, given_in_python=given_in_python)
    check_prompt_dirs(checked, base, PYTHON_SPEC)
    return LoadedSpec.model_construct(  # validated here; again would lose the context
        spec=checked,
        path=PYTHON_SPEC,
        base_dir=str(base),
        sha256=hashlib.sha256(json.dumps(raw, sort_keys=True).encode("utf-8")).hexdigest(),
        raw=raw,
    )
