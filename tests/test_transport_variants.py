"""`transport_for` chooses through the `TRANSPORTS` registry only: the model
id's prefix names the transport, and a config that selects instructor or the lean
OpenAI-compatible client gets that transport's registered variant. No `if` per variant."""

from __future__ import annotations

import inspect
import subprocess
import sys
from typing import Any

import pytest

from assay.core.registry import TRANSPORTS
from assay.errors import ModelConfigError
from assay.models import (
    InstructorTransport,
    LiteLLMTransport,
    MockTransport,
    ModelConfig,
    transport_for,
)


def _config(model: str, **settings: Any) -> ModelConfig:
    return ModelConfig(model=model, **settings)


@pytest.mark.parametrize(
    ("model", "settings", "chosen"),
    [
        ("openai/m", {"transport": "litellm"}, "LiteLLMTransport"),
        ("openai/m", {}, "OpenAIHTTPTransport"),  # auto: every setting is the lean client's
        ("anthropic/m", {}, "LiteLLMTransport"),
        ("anthropic/m", {"structured_output": "instructor"}, "InstructorTransport"),
        ("openai/m", {"transport": "openai"}, "OpenAIHTTPTransport"),
        ("mock/echo", {}, "MockTransport"),
    ],
)
def test_each_config_gets_its_transport(model: str, settings: dict[str, Any], chosen: str) -> None:
    assert type(transport_for(_config(model, **settings))).__name__ == chosen


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            "mock/echo",
            'structured_output = "instructor" is for hosted models reached through litellm; '
            "'mock/echo' is served by the 'mock' transport",
        ),
        (
            "hf-nli/some-dir",
            'structured_output = "instructor" is for hosted models reached through litellm; '
            "'hf-nli/some-dir' is served by the 'hf-nli' transport",
        ),
    ],
)
def test_instructor_off_litellm_is_refused_as_before(model: str, message: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        transport_for(_config(model, structured_output="instructor"))
    assert caught.value.message == message


def test_a_classifier_is_not_a_chat_model() -> None:
    with pytest.raises(ModelConfigError, match="hf-nli models are verifiers, not chat models"):
        transport_for(_config("hf-nli/some-dir"))


class _Plain(MockTransport):
    """A plugin's chat transport with an instructor variant of its own."""

    variants = {"instructor": f"{__name__}:_PlainInstructor"}


class _PlainInstructor(MockTransport):
    pass


def test_variants_are_looked_up_on_the_registered_transport() -> None:
    """One rule for every prefix: a plugin's transport may serve a selector too."""
    with TRANSPORTS.scoped():
        TRANSPORTS.add("plain", _Plain, description="test", package="tests")
        chosen = transport_for(_config("plain/m", structured_output="instructor"))
    assert type(chosen) is _PlainInstructor


def test_the_variants_are_registered_not_branched_on() -> None:
    assert set(LiteLLMTransport.variants) == {"instructor", "openai"}
    assert issubclass(InstructorTransport, LiteLLMTransport)
    source = inspect.getsource(transport_for)
    assert "InstructorTransport" not in source and "OpenAIHTTPTransport" not in source


def test_importing_assay_models_loads_neither_aiohttp_nor_instructor() -> None:
    code = (
        "import sys, assay, assay.models; "
        "print(sorted(m for m in ('aiohttp', 'instructor') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
