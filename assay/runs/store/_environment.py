"""Facts about where a run happened: versions, platform, git state."""

from __future__ import annotations

import functools
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from assay._version import __version__
from assay.redaction import redact as redact_secrets

__all__ = ["environment", "git_state", "package_versions", "redact_secrets"]

TRACKED_PACKAGES = (
    "litellm",
    "openai",
    "pydantic",
    "tenacity",
    "diskcache",
    "jinja2",
    "pandas",
    "numpy",
    "httpx",
    "instructor",
    "transformers",
    "torch",
    # field libraries behind retrieval and metrics
    "bm25s",
    "scipy",
    "scikit-learn",
    "krippendorff",
    "sentence-transformers",
)


def package_versions() -> dict[str, str | None]:
    """Installed versions of the tracked packages (None: not installed)."""
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple[tuple[str, str | None], ...]:
    """Looked up once per process (~13 ms: a scan of the installed distributions): the
    code a process runs is what it imported, whatever is installed later."""
    found: list[tuple[str, str | None]] = []
    for name in TRACKED_PACKAGES:
        try:
            found.append((name, version(name)))
        except PackageNotFoundError:
            found.append((name, None))
    return tuple(found)


def git_state(cwd: Path) -> dict[str, Any] | None:
    """Commit and dirty flag of the working directory's repo, or None outside a repo."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
        if commit.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def environment(cwd: Path) -> dict[str, Any]:
    return {
        "assay_version": __version__,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "git": git_state(cwd),
    }
