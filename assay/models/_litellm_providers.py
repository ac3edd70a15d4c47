"""The provider prefixes litellm routes, read from the installed litellm without importing it.

A spec naming `nosuchprovider/x` is refused before any request; asking litellm
(`litellm.provider_list`) costs its import, 2-6 s, for a one-line error. The list is
litellm's own `LlmProviders` enum (litellm/types/utils.py), so this reads that class's
`NAME = "value"` lines from the installed source; when the file or the class is not where
it was (another litellm layout), it imports litellm and asks, as before.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

_CLASS = re.compile(r"^class LlmProviders\(str, Enum\):\n(?P<body>(?:[ \t].*\n|\n)+)", re.M)
_MEMBER = re.compile(r'^[ \t]+[A-Z][A-Z0-9_]*\s*=\s*"(?P<value>[^"]+)"', re.M)


def _from_source() -> frozenset[str]:
    """The enum's values from the installed source; empty when it cannot be read."""
    spec = importlib.util.find_spec("litellm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        try:
            text = (Path(folder) / "types" / "utils.py").read_text(encoding="utf-8")
        except OSError:
            continue
        found = _CLASS.search(text)
        if found:
            return frozenset(m.group("value") for m in _MEMBER.finditer(found.group("body")))
    return frozenset()


def _from_import() -> frozenset[str]:
    from assay.models._hosted import litellm_module

    return frozenset(str(getattr(p, "value", p)) for p in litellm_module().provider_list)


@functools.cache
def litellm_providers() -> frozenset[str]:
    """Every provider prefix litellm routes (`openai`, `anthropic`, `ollama`, ...)."""
    return _from_source() or _from_import()
