"""`environment`: the versions and model ids a run recorded, next to today's.

Informational: a newer litellm or a provider serving another model snapshot does not
make the records wrong, but a reader re-running the run must know before comparing.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

from assay._version import __version__
from assay.audit._model import Check, EnvRow
from assay.core.manifest import Manifest
from assay.runs.store._environment import package_versions

KEY_PACKAGES = ("litellm", "openai", "pydantic")


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def environment_rows(manifest: Manifest) -> list[EnvRow]:
    """assay, python, the key packages (always), other packages that differ, and for
    each model the id asked for vs the ids the API answered with."""
    then = manifest.environment
    recorded = then.get("packages")
    packages_then: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    packages_now = package_versions()
    rows = [
        EnvRow(what="assay", then=_text(then.get("assay_version")), now=__version__),
        EnvRow(what="python", then=_text(then.get("python")), now=sys.version.split()[0]),
        EnvRow(what="platform", then=_text(then.get("platform")), now=platform.platform()),
    ]
    for name in sorted({*packages_then, *packages_now}):
        row = EnvRow(
            what=name, then=_text(packages_then.get(name)), now=_text(packages_now.get(name))
        )
        if name in KEY_PACKAGES or not row.same:
            rows.append(row)
    for judge in manifest.judges:
        client = judge.get("client") if isinstance(judge, dict) else None
        stats = judge.get("stats") if isinstance(judge, dict) else None
        if not isinstance(client, dict) or not isinstance(stats, dict):
            continue
        asked = _text(client.get("model"))
        returned = [str(m) for m in stats.get("model_returned") or []]
        if not returned:  # every answer from the cache, or no model: nothing to compare
            continue
        rows.append(
            EnvRow(
                what=f"model {judge.get('id')} (asked → returned)",
                then=asked,
                now=asked if _same_model(asked, returned) else ", ".join(returned) or None,
            )
        )
    return rows


def _same_model(asked: str | None, returned: list[str]) -> bool:
    """Whether the provider answered as the model asked for: litellm's provider prefix
    (`openai/` in `openai/gpt-4o-mini`) is not part of the id the provider reports."""
    if asked is None:
        return False
    bare = asked.split("/", 1)[1] if "/" in asked else asked
    return all(m in (asked, bare) for m in returned)


def check_environment(rows: list[EnvRow]) -> Check:
    differ = [r for r in rows if not r.same and not r.what.startswith("model ")]
    notes = [f"{r.what}: {r.then} → {r.now}" for r in differ]
    return Check(name="environment", result="info", checked=len(rows), notes=notes)
