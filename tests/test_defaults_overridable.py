"""Every `[defaults]` key can be overridden in a model block: the
README says so, but `initial_wait_s` and `max_wait_s` were refused in `[[judges]]`,
decomposer and verifier blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.core.building import EndpointOverrides
from assay.runs.assemble._components import decoding_for, model_config_for
from assay.runs.spec._spec import ModelDefaults
from tests._cli import invoke

# a valid value different from the default, for every [defaults] key
OTHER: dict[str, Any] = {
    "temperature": 0.5,
    "top_p": 0.5,
    "max_tokens": 7,
    "seed": 3,
    "stop": ["END"],
    "timeout_s": 9.0,
    "max_concurrency": 3,
    "max_attempts": 2,
    "initial_wait_s": 0.25,
    "max_wait_s": 5.0,
    "structured_output": "instructor",
    "instructor_mode": "json",
    "max_reasks": 1,
    "logprobs": True,
    "top_logprobs": 2,
    "transport": "openai",
    "rpm": 600,
    "tpm": 90_000,
    "adaptive_concurrency": False,
    "input_cost_per_token": 2e-06,
    "output_cost_per_token": 8e-06,
    "max_cost_usd": 1.5,
}
NEEDS = {"instructor_mode": {"structured_output": "instructor"}, "max_reasks": {}}
NEEDS["top_logprobs"] = {"logprobs": True}
NEEDS["max_reasks"] = NEEDS["instructor_mode"]
NEEDS["structured_output"] = {"transport": "litellm"}
NEEDS["input_cost_per_token"] = {"output_cost_per_token": 8e-06}  # prices come in pairs
NEEDS["output_cost_per_token"] = {"input_cost_per_token": 2e-06}


def test_every_defaults_key_has_a_block_override() -> None:
    assert set(OTHER) == set(ModelDefaults.model_fields)  # a new key needs an entry here
    assert set(ModelDefaults.model_fields) <= set(EndpointOverrides.model_fields)


@pytest.mark.parametrize("name", sorted(OTHER))
def test_block_value_wins_over_defaults(name: str) -> None:
    block = EndpointOverrides.model_validate({name: OTHER[name], **NEEDS.get(name, {})})
    config = model_config_for(block, ModelDefaults(), "openai/m")
    settings = {
        **config.model_dump(),
        **config.retry.model_dump(),
        **decoding_for(block, ModelDefaults()).model_dump(),
    }
    assert settings[name] == OTHER[name]


def test_spec_with_every_defaults_key_in_each_model_block_validates(tmp_path: Path) -> None:
    keys = "\n".join(
        f"{k} = {v!r}".replace("'", '"').replace("True", "true").replace("False", "false")
        for k, v in OTHER.items()
        if k not in ("structured_output", "instructor_mode", "max_reasks")
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f"""name = "overrides"
[[datasets]]
path = "builtin:forcebench-demo"
[[judges]]
models = ["openai/m"]
prompts = ["generic-support@1"]
api_base = "http://127.0.0.1:9/v1"
{keys}
[factuality]
datasets = [{{ path = "builtin:factuality-demo" }}]
[factuality.decomposer]
kind = "llm"
model = "openai/m"
api_base = "http://127.0.0.1:9/v1"
{keys}
[[factuality.verifiers]]
kind = "context"
model = "openai/m"
api_base = "http://127.0.0.1:9/v1"
{keys}
""",
        encoding="utf-8",
    )
    code, out, err = invoke(["validate", str(spec)])
    assert code == 0, err
