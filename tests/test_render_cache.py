"""Templates are compiled once per content and fixed sections rendered once; what a
prompt renders is exactly what a fresh jinja template of the same source renders."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from assay.errors import PromptError
from assay.prompts import PromptRegistry
from assay.prompts._prompt import compile_template, load_prompt_file

FRESH = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _values(names: list[str], row: int) -> dict[str, str]:
    return {name: f"{name} of row {row}: 5 mg/dl\r\n{{not jinja}} <b>&</b>" for name in names}


@pytest.mark.parametrize("prompt", list(PromptRegistry()), ids=lambda p: p.ref)
def test_every_builtin_prompt_renders_as_a_fresh_template(prompt: object) -> None:
    from assay.prompts import Prompt

    assert isinstance(prompt, Prompt)
    for row in range(3):
        values = _values([*prompt.meta.variables, *prompt.meta.optional_variables], row)
        if row == 2:  # optional variables left out render as None
            values = {k: v for k, v in values.items() if k in prompt.meta.variables}
        full = {name: None for name in prompt.meta.optional_variables} | values
        try:
            want = [("user", FRESH.from_string(prompt.user_template).render(full).strip())]
            if prompt.system_template is not None:
                system = FRESH.from_string(prompt.system_template).render(full).strip()
                want.insert(0, ("system", system))
        except jinja2.UndefinedError:  # wants structured values (a list of premises)
            with pytest.raises(PromptError):
                prompt.render(values)
            continue
        assert [(m.role, m.content) for m in prompt.render(values)] == want


def test_the_same_source_is_compiled_once_across_loads() -> None:
    first, second = PromptRegistry(), PromptRegistry()
    a, b = first.get("generic-support@1"), second.get("generic-support@1")
    a.render(_values(a.meta.variables, 0))
    b.render(_values(b.meta.variables, 0))
    assert a is not b and a._compiled["user"] is b._compiled["user"]
    assert compile_template(a.user_template) is a._compiled["user"]
    assert compile_template(a.user_template + " ") is not a._compiled["user"]


def test_a_fixed_section_is_rendered_once_and_a_templated_one_every_time(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mine.prompt"
    path.write_text(
        '+++\nid = "mine"\nversion = 1\ntask = "judge"\nvariables = ["claim", "evidence"]\n'
        'output_schema = "SupportVerdict"\n'
        'labels = ["fully_supported", "partially_supported", "unsupported", "contradicted", '
        '"irrelevant"]\n[scores]\nfully_supported = 1.0\npartially_supported = 0.5\n'
        "unsupported = 0.0\ncontradicted = 0.0\nirrelevant = 0.0\n+++\n"
        "=== system ===\nYou judge claims.\r\nBe strict.\n"
        "=== user ===\n{{ claim }} / {{ evidence }}\n",
        encoding="utf-8",
    )
    prompt = load_prompt_file(path)
    assert prompt._static == {"system": "You judge claims.\nBe strict."}
    one = prompt.render({"claim": "c1", "evidence": "e1"})
    two = prompt.render({"claim": "c2", "evidence": "e2"})
    assert [m.content for m in one] == ["You judge claims.\nBe strict.", "c1 / e1"]
    assert two[1].content == "c2 / e2"
    with pytest.raises(PromptError, match="needs variable 'evidence'"):
        prompt.render({"claim": "c3"})
