"""Every package with names imported on first use (`assay._lazy.LazyNames`) gives each
public name, refuses an unknown one as Python does, and lists them all in `dir()`."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "assay",
    "assay.runs",
    "assay.runs.rebuild",
    "assay.report",
    "assay.datasets",
    "assay.metrics",
    "assay.judges",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves_and_an_unknown_one_is_refused(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in vars(module)  # kept: the next lookup does not import again
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        module.nope  # noqa: B018
