"""Which model ids run locally is one list (`assay.models.LOCAL_PROVIDERS`), asked through
`is_local` everywhere: the spec's endpoint checks once missed `hf-ce/`."""

from __future__ import annotations

import pytest

from assay.core.registry import TRANSPORTS
from assay.models import LOCAL_PROVIDERS, is_local
from assay.runs.preview._estimate import Estimator
from assay.runs.spec._targets import Target


def test_every_local_provider_is_a_registered_transport_and_local_modules_are_listed() -> None:
    for name in LOCAL_PROVIDERS:
        assert name in TRANSPORTS
    local_modules = {
        e.name for e in TRANSPORTS.entries() if e.target.startswith("assay.models._local_")
    }
    assert local_modules == set(LOCAL_PROVIDERS)


@pytest.mark.parametrize("provider", LOCAL_PROVIDERS)
def test_a_local_model_is_no_endpoint_and_costs_nothing(provider: str) -> None:
    model = f"{provider}/models/tiny"
    assert is_local(model)
    assert not Target(model, None, "judges[0].models[0]", "judges[0]").hosted
    assert Estimator().price(model, 100, 10) == 0.0


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "hf", "hfx/m", "", None])
def test_other_ids_are_not_local(model: str | None) -> None:
    assert not is_local(model)
