"""The suite itself must never touch the real home directory (module-scoped fixtures and
subprocesses included), so a developer's cache and settings survive a test run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REAL_HOME, SESSION_HOME

from assay.models._cache import default_cache_dir


def test_home_is_a_throwaway_directory() -> None:
    assert Path.home() == SESSION_HOME
    assert Path.home() != REAL_HOME
    assert os.environ["XDG_CACHE_HOME"].startswith(str(SESSION_HOME))


def test_default_cache_dir_is_outside_the_real_home(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("ASSAY_CACHE_DIR")
    assert default_cache_dir().is_relative_to(SESSION_HOME)
    assert not default_cache_dir().is_relative_to(REAL_HOME)


def test_subprocesses_inherit_the_throwaway_home() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from pathlib import Path; print(Path.home())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(out.stdout.strip()) == SESSION_HOME
