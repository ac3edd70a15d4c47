"""Shared fixtures. Nothing here touches the network beyond 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from assay.testing import FakeOpenAIServer  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never let a test read or write the user's real cache."""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv
