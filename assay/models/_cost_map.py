"""Prices and capabilities of OpenAI models from litellm's bundled cost map, read without
importing litellm.

The lean transport (`transport = "openai"`) exists to be cheap: importing litellm for a
price costs ~2 s and ~130 MB of memory, more than the rest of a run of thousands of
judgments. This reads the same JSON file litellm reads with `LITELLM_LOCAL_MODEL_COST_MAP`
(the default assay sets), so both transports record the same cost; a test checks the
figures against `litellm.cost_per_token` for every OpenAI chat model in the map. A user
who asked litellm for its remote map (`LITELLM_LOCAL_MODEL_COST_MAP` false) gets litellm's
own lookups instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"
TIER_TOKENS = 272_000
"""OpenAI's long-context tier: prompts above it are priced by the `_above_272k` keys."""
_KEPT = (
    "litellm_provider",
    "mode",
    "input_cost_per_token",
    "output_cost_per_token",
    "input_cost_per_token_above_272k_tokens",
    "output_cost_per_token_above_272k_tokens",
    "supports_response_schema",
)


def uses_local_map() -> bool:
    """True unless the user asked litellm for its remote cost map."""
    value = os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return value.strip().lower() in ("true", "1", "yes")


def map_path() -> Path | None:
    """litellm's bundled cost map, found without importing litellm (None: not installed)."""
    found = importlib.util.find_spec("litellm")
    if found is None or found.origin is None:
        return None
    path = Path(found.origin).parent / MAP_FILE
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _openai_models() -> dict[str, dict[str, Any]]:
    """The map's OpenAI entries, only the fields read here (the whole map is ~3 MB of
    JSON; only a few hundred entries are kept)."""
    path = map_path()
    if path is None:
        return {}
    full = json.loads(path.read_text(encoding="utf-8"))
    return {
        name: {k: entry[k] for k in _KEPT if k in entry}
        for name, entry in full.items()
        if isinstance(entry, dict) and entry.get("litellm_provider") == "openai"
    }


def openai_model_info(model: str) -> dict[str, Any] | None:
    """The map's entry for `openai/<name>` (or `<name>`), None when the map lacks it."""
    name = model.split("/", 1)[1] if model.startswith("openai/") else model
    models = _openai_models()
    found = models.get(model) or models.get(name)
    if found is None and name.startswith("ft:"):  # ft:<base>:<org>::<id> is priced as ft:<base>
        found = models.get(":".join(name.split(":")[:2]))
    return found


def openai_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for one answer, as `litellm.cost_per_token` prices it; None when unpriced."""
    info = openai_model_info(model)
    if info is None:
        return None
    prompt_rate = info.get("input_cost_per_token", 0.0)  # litellm counts a missing rate as 0
    completion_rate = info.get("output_cost_per_token", 0.0)
    if prompt_tokens > TIER_TOKENS:
        prompt_rate = info.get("input_cost_per_token_above_272k_tokens", prompt_rate)
        completion_rate = info.get("output_cost_per_token_above_272k_tokens", completion_rate)
    return float(prompt_rate) * prompt_tokens + float(completion_rate) * completion_tokens


def supports_response_schema(model: str) -> bool:
    """Whether the map says the model takes a JSON schema (`structured_output = "auto"`)."""
    info = openai_model_info(model)
    return bool(info and info.get("supports_response_schema"))
