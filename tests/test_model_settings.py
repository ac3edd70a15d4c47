"""Model settings are declared once: what a spec's settings become is pinned
here — the manifest's client and decoding description (keys in order), the cache key,
the one-line spec errors — so that moving where the settings are declared cannot
change a manifest, a cache key or an error."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel, Field, ValidationError

import assay.judges  # noqa: F401  (registers the judge kinds)
from assay.core import settings as settings_module
from assay.core.building import EndpointOverrides as BuildingOverrides
from assay.core.settings import (
    EndpointKeys,
    EndpointOverrides,
    ModelDefaults,
    ModelSettings,
    resolve,
)
from assay.errors import SpecError
from assay.models import ChatRequest, Decoding, ModelConfig, RetryPolicy
from assay.prompts import Message
from assay.runs.assemble import _components
from assay.runs.assemble._components import (
    ClientPool,
    ComponentContext,
    build_judges,
    decoding_for,
    model_config_for,
)
from assay.runs.spec._spec import load_spec

HEAD = 'name = "pins"\n[[datasets]]\npath = "builtin:forcebench-demo"\n'
JUDGE = '[[judges]]\nmodels = ["openai/m"]\nprompts = ["generic-support@1"]\n'
SPEC = (
    HEAD
    + """[defaults]
temperature = 0.2
max_tokens = 300
seed = 11
max_attempts = 3
structured_output = "json_object"
[[judges]]
models = ["openai/m", "mock/echo"]
prompts = ["generic-support@1"]
api_base = "http://127.0.0.1:9/v1"
top_p = 0.5
stop = ["END"]
timeout_s = 7.5
initial_wait_s = 0.5
extra_body = { reasoning_effort = "low" }
"""
)
DECODING = (
    '"decoding": {"temperature": 0.2, "top_p": 0.5, "max_tokens": 300, "seed": 11, '
    '"stop": ["END"]}, "output_cap_tokens": 300, "parser_version": "assay-verdict/1", '
    '"sample_index": 0}'
)
DESCRIBED = [
    '{"kind": "llm", "id": "openai/m::generic-support@1", "client": {"kind": "hosted", '
    '"provider": "openai", "api_base": "http://127.0.0.1:9/v1", "model": "openai/m", '
    '"timeout_s": 7.5, "max_concurrency": 16, "retry": {"max_attempts": 3, '
    '"initial_wait_s": 0.5, "max_wait_s": 60.0, "jitter_s": 1.0}, "structured_output": '
    '"json_object", "extra_body": {"reasoning_effort": "low"}, "transport": "litellm", '
    '"transport_reason": "extra_body key \'reasoning_effort\' may be one litellm reads '
    'itself: litellm"}, ' + DECODING,
    '{"kind": "llm", "id": "mock/echo::generic-support@1", "client": {"kind": "mock", '
    '"model": "mock/echo", "max_concurrency": 16}, ' + DECODING,
]
CACHE_KEYS = [
    "3f6ebe0e03517f4e6f4e1d74d8851d3d8abee46a13452740ef318946c67a3397",
    "b82ff2978efbb6287a333d136bc2e8c10d6d40dc117d5ec90f5b08603b66b615",
]


def _judges(tmp_path: Path) -> list[Any]:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC, encoding="utf-8")
    loaded = load_spec(path)
    return build_judges(loaded, ComponentContext(loaded, ClientPool(None)))


def test_manifest_description_of_spec_settings_is_pinned(tmp_path: Path) -> None:
    described = [
        json.dumps({k: v for k, v in j.describe().items() if k != "prompt"})
        for j in _judges(tmp_path)
    ]
    assert described == DESCRIBED


def test_cache_keys_of_spec_settings_are_pinned(tmp_path: Path) -> None:
    """A changed key would silently re-run every cached request."""
    keys = []
    for judge in _judges(tmp_path):
        request = ChatRequest(
            messages=[Message(role="user", content="hi")], decoding=judge.decoding
        )
        keys.append(judge.client.transport.cache_key(request))
    assert keys == CACHE_KEYS


def _spec_error(tmp_path: Path, body: str) -> str:
    path = tmp_path / "spec.toml"
    path.write_text(HEAD + body, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    return str(caught.value).replace(str(path), "<spec>")


CHOICES = "String should match pattern '^(auto|json_schema|json_object|off|instructor)$'"
SPEC_ERRORS = [
    (
        JUDGE + '[defaults]\nstructured_output = "json"\n',
        f"<spec>: field 'defaults.structured_output': {CHOICES}",
    ),
    (
        JUDGE + 'instructor_mode = "x"\n',
        "<spec>: field 'judges[0].instructor_mode': String should match pattern "
        "'^(tools|json|md_json)$'",
    ),
    (
        JUDGE + 'transport = "http"\n',
        "<spec>: field 'judges[0].transport': String should match pattern "
        "'^(auto|litellm|openai)$'",
    ),
    (
        JUDGE + "[defaults]\ntransport = 1\n",
        "<spec>: field 'defaults.transport': Input should be a valid string",
    ),
    (  # two bad keys: the first in declaration order is the one reported
        JUDGE + "[defaults]\nmax_reasks = 99\ntemperature = 3\n",
        "<spec>: field 'defaults.temperature': Input should be less than or equal to 2",
    ),
    (
        JUDGE + "max_attempts = 0\nmax_tokens = 0\n",
        "<spec>: field 'judges[0].max_tokens': Input should be greater than or equal to 1",
    ),
    (
        JUDGE + "[defaults]\napi_base = 'http://x'\n",
        "<spec>: field 'defaults.api_base': Extra inputs are not permitted",
    ),
    (
        JUDGE + "jitter_s = 1.0\n",
        "<spec>: field 'judges[0].jitter_s': Extra inputs are not permitted",
    ),
]


@pytest.mark.parametrize(("body", "expected"), SPEC_ERRORS)
def test_spec_errors_about_settings_are_pinned(tmp_path: Path, body: str, expected: str) -> None:
    assert _spec_error(tmp_path, body) == expected


def test_model_config_names_its_choices() -> None:
    """In Python a bad choice lists the values (a spec names the pattern)."""
    with pytest.raises(ValidationError) as caught:
        ModelConfig(model="openai/m", transport="x")  # type: ignore[arg-type]
    assert "Input should be 'auto', 'litellm' or 'openai'" in str(caught.value)


# --- the settings are declared once (assay.core.settings) and derived everywhere else ---

CONFIGS: tuple[type[BaseModel], ...] = (Decoding, RetryPolicy, ModelConfig)
PYTHON_ONLY = {"model", "retry", "jitter_s"}  # no spec key: the block's model, a nested policy


def _same_field(a: Any, b: Any) -> bool:
    return (a.annotation, a.default, a.default_factory, a.metadata, a.description) == (
        b.annotation,
        b.default,
        b.default_factory,
        b.metadata,
        b.description,
    )


def test_every_setting_has_one_home_in_the_configs_with_its_declared_field() -> None:
    declared = {**EndpointKeys.model_fields, **ModelSettings.model_fields}
    for name, field in declared.items():
        homes = [c for c in CONFIGS if name in c.model_fields]
        assert len(homes) == 1, (name, homes)
        assert _same_field(homes[0].model_fields[name], field), name
    held = {n for c in CONFIGS for n in c.model_fields}
    assert held - PYTHON_ONLY == set(declared)  # a config field no spec could set: declare it


def test_spec_tables_are_derived_from_the_declaration() -> None:
    settings = list(ModelSettings.model_fields)
    assert list(ModelDefaults.model_fields) == settings
    assert list(EndpointOverrides.model_fields) == [*EndpointKeys.model_fields, *settings]
    for name, field in ModelSettings.model_fields.items():
        assert ModelDefaults.model_fields[name].default == field.default, name
        assert EndpointOverrides.model_fields[name].default is None, name
    assert BuildingOverrides is EndpointOverrides  # the plugin-facing name, not a copy


@pytest.mark.parametrize("name", ["structured_output", "instructor_mode", "transport"])
def test_spec_choices_are_the_declared_literals(name: str) -> None:
    literal = ModelSettings.model_fields[name].annotation
    assert get_origin(literal) is Literal
    for value in get_args(literal):
        assert getattr(ModelDefaults.model_validate({name: value}), name) == value
        assert getattr(EndpointOverrides.model_validate({name: value}), name) == value
    with pytest.raises(ValidationError, match="should match pattern"):
        EndpointOverrides.model_validate({name: "none-of-them"})


def test_every_setting_reaches_the_configs_from_defaults_and_from_a_block() -> None:
    from tests.test_defaults_overridable import NEEDS, OTHER

    assert set(OTHER) == set(ModelSettings.model_fields)  # a new setting needs a value there
    for name, value in OTHER.items():
        table = {name: value, **NEEDS.get(name, {})}
        for defaults, block in ((table, {}), ({}, table)):
            d, b = ModelDefaults.model_validate(defaults), EndpointOverrides.model_validate(block)
            config = model_config_for(b, d, "openai/m")
            held = {**config.model_dump(), **config.retry.model_dump()}
            held.update(decoding_for(b, d).model_dump())
            assert held[name] == value == getattr(resolve(d, b), name), (name, defaults)


def test_a_new_setting_is_one_field() -> None:
    """A setting added to the declaration is a spec key with its bounds, optional in a
    block, and carried by the merge loop (no list of names to extend)."""

    class MoreSettings(ModelSettings):
        frequency_penalty: float = Field(default=0.0, ge=-2.0, le=2.0)

    table = settings_module._spec_model(
        "T", settings_module._SpecTable, "t", optional=False, settings=MoreSettings
    )
    block = settings_module._spec_model(
        "B", EndpointKeys, "b", optional=True, settings=MoreSettings
    )
    assert table().frequency_penalty == 0.0 and block().frequency_penalty is None
    with pytest.raises(ValidationError, match="less than or equal to 2"):
        block(frequency_penalty=3.0)


def test_the_merge_has_no_list_of_names() -> None:
    """The 14 hand-written `_pick` lines must not come back."""
    source = inspect.getsource(_components)
    assert "_pick" not in source
    assert not [n for n in ModelSettings.model_fields if f'"{n}"' in source]
