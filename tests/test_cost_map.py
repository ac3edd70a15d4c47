"""The lean transport's prices, read from litellm's bundled map without importing litellm,
agree with `litellm.cost_per_token` for every OpenAI chat model in the map."""

from __future__ import annotations

import subprocess
import sys

import litellm
import pytest
from litellm.exceptions import ModelNotMappedError

from assay.models import _cost_map

CHAT_MODES = ("chat", "responses")
CHAT_MODELS = sorted(
    name for name, info in _cost_map._openai_models().items() if info.get("mode") in CHAT_MODES
)


def test_the_map_holds_openai_chat_models() -> None:
    assert len(CHAT_MODELS) > 50
    assert "gpt-4o-mini" in CHAT_MODELS


@pytest.mark.parametrize("tokens", [(0, 0), (1, 1), (1234, 56), (300_000, 1_000)])
def test_cost_agrees_with_litellm_for_every_openai_chat_model(tokens: tuple[int, int]) -> None:
    prompt, completion = tokens
    for name in CHAT_MODELS:  # the lean transport's ids are always openai/<name>
        model = f"openai/{name}"
        a, b = litellm.cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
        assert _cost_map.openai_cost(model, prompt, completion) == pytest.approx(
            a + b, rel=1e-12, abs=1e-15
        ), model


def test_fine_tuned_ids_are_priced_as_their_base() -> None:
    model = "openai/ft:gpt-4o-mini-2024-07-18:my-org::abc123"
    a, b = litellm.cost_per_token(model=model, prompt_tokens=10, completion_tokens=20)
    assert _cost_map.openai_cost(model, 10, 20) == pytest.approx(a + b, rel=1e-12)


def test_a_model_the_map_lacks_is_unpriced_on_both_sides() -> None:
    with pytest.raises(ModelNotMappedError):  # litellm: not mapped
        litellm.cost_per_token(model="openai/local-llama", prompt_tokens=1, completion_tokens=1)
    assert _cost_map.openai_cost("openai/local-llama", 1, 1) is None


def test_response_schema_support_agrees_with_litellm() -> None:
    for name in CHAT_MODELS:
        ours = _cost_map.supports_response_schema(f"openai/{name}")
        assert ours == litellm.supports_response_schema(model=f"openai/{name}"), name


def test_reading_the_map_does_not_import_litellm() -> None:
    code = (
        "import sys; from assay.models import _cost_map as m; "
        "m.openai_cost('openai/gpt-4o-mini', 10, 10); print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
