"""The run manifest's environment names the field libraries and their installed versions."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from assay.runs.store._environment import environment


def test_environment_records_field_libraries(tmp_path: Path) -> None:
    packages = environment(tmp_path)["packages"]
    for name in ("bm25s", "scipy", "scikit-learn", "krippendorff"):
        assert packages[name] == version(name)
    # the `local` extra: recorded when installed, None otherwise
    assert "sentence-transformers" in packages
