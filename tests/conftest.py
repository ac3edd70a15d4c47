"""Shared fixtures. Nothing here touches the network beyond 127.0.0.1."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The whole session (module- and session-scoped fixtures and subprocesses included) gets
# a throw-away home: no test may read or write the user's real ~/.cache, ~/.config, ...
REAL_HOME = Path.home()
SESSION_HOME = Path(tempfile.mkdtemp(prefix="assay-test-home-"))
os.environ["HOME"] = str(SESSION_HOME)
os.environ["XDG_CACHE_HOME"] = str(SESSION_HOME / ".cache")
os.environ["ASSAY_CACHE_DIR"] = str(SESSION_HOME / ".cache" / "assay-session")
atexit.register(shutil.rmtree, SESSION_HOME, ignore_errors=True)

from assay.core.registry import scoped_registries  # noqa: E402
from assay.testing import FakeOpenAIServer  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never let a test read or write the user's real cache."""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def _isolated_registries() -> Iterator[None]:
    """What a test registers (a judge, a transport, a report format) is gone after it."""
    with scoped_registries():
        yield


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="session", autouse=True)
def readme_linters(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Popen[str]]]:
    """When the README test is selected, its linters (ruff + mypy, ~70 s of one core, read
    only the repository) start with the session, beside the tests before it, instead of
    beside the README blocks alone; tests/test_readme.py checks them in their place."""
    started: dict[str, Popen[str]] = {}
    if any(
        i.nodeid.endswith("test_readme.py::test_every_readme_block_runs")
        for i in request.session.items
    ):
        from test_readme import start_linters

        started = start_linters(tmp_path_factory.mktemp("readme-lint"))
    yield started
    for proc in started.values():  # not reached by the README test (-x, -k): stop them
        proc.kill()
        proc.communicate()
