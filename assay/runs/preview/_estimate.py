"""Token and cost estimates for `assay run --dry-run`, from litellm's tokenizer and
bundled cost map (never fetched: LITELLM_LOCAL_MODEL_COST_MAP is set before import)."""

from __future__ import annotations

from typing import Any

from assay.models import is_local

TOKENS_HOW = (
    "input tokens: litellm.token_counter over the rendered messages (tiktoken: the model's "
    "own encoding for OpenAI models, an approximation for others; the response schema is "
    "not counted)"
)
OUTPUT_HOW = (
    "output tokens: upper bound = max_tokens × requests to send; cost shown as input-only "
    "(lower bound) – input + output at that cap (upper bound)"
)


class Estimator:
    """Counts prompt tokens and prices requests without sending anything."""

    def __init__(self) -> None:
        self._module: Any = None  # litellm costs seconds to import: only when needed
        self._fallback: set[str] = set()

    @property
    def _litellm(self) -> Any:
        if self._module is None:
            from assay.models._hosted import litellm_module

            self._module = litellm_module()
        return self._module

    def count(self, model: str, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of one request; ~4 characters a token if the counter fails."""
        litellm = self._litellm
        before = getattr(litellm, "disable_hf_tokenizer_download", False)
        litellm.disable_hf_tokenizer_download = True  # a tokenizer download is a request
        try:
            return int(litellm.token_counter(model=model, messages=messages))
        except Exception:
            self._fallback.add(model)
            return sum(len(str(m.get("content") or "")) for m in messages) // 4 + 4
        finally:
            litellm.disable_hf_tokenizer_download = before

    @property
    def approximated(self) -> list[str]:
        """Models whose tokens were estimated as characters / 4."""
        return sorted(self._fallback)

    def price(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD from litellm's cost map; None when the model has no price there."""
        if is_local(model):
            return 0.0
        try:
            cost_in, cost_out = self._litellm.cost_per_token(
                model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
        except Exception:
            return None
        return float(cost_in) + float(cost_out)
