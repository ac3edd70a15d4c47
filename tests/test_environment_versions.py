"""The manifest's package versions are looked up once per process (a scan of the
installed distributions costs ~13 ms a run) and handed out as fresh dicts."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from assay.runs.store._environment import TRACKED_PACKAGES, package_versions


def _installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def test_versions_are_the_installed_ones_and_each_call_gets_its_own_dict() -> None:
    first = package_versions()
    assert first == {name: _installed(name) for name in TRACKED_PACKAGES}
    first["pydantic"] = "tampered"
    assert package_versions()["pydantic"] == _installed("pydantic")
