"""Prompt files: built-ins, hashing, rendering, user directories and malformed files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from assay.errors import PromptError
from assay.prompts import (
    BUILTIN_DIR,
    PROMPT_PATH_ENV,
    ForceVerdict,
    PromptRegistry,
    SupportVerdict,
    load_prompt_file,
)

FORCE_LABELS = ["force_calibrated", "force_gap", "contradicted", "irrelevant"]
FORCE_SCORES = {"force_calibrated": 1.0, "force_gap": 0.0, "contradicted": 0.0, "irrelevant": 0.0}
GENERIC_LABELS = [
    "fully_supported",
    "partially_supported",
    "unsupported",
    "contradicted",
    "irrelevant",
]
GENERIC_SCORES = {
    "fully_supported": 1.0,
    "partially_supported": 0.5,
    "unsupported": 0.0,
    "contradicted": 0.0,
    "irrelevant": 0.0,
}
BUILTIN_IDS = ["force-aware", "force-axis-free", "force-dummy-axis", "generic-support"]

VALID_PROMPT = """\
+++
id = "{id}"
version = {version}
task = "judge"
variables = ["evidence", "claim"]
optional_variables = ["question"]
output_schema = "LabelVerdict"
labels = ["yes", "no"]

[scores]
yes = 1.0
no = 0.0
+++
=== system ===
System text {marker}.
=== user ===
Evidence: {{{{ evidence }}}}
Claim: {{{{ claim }}}}
"""


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def _valid(pid: str = "my-prompt", version: int = 1, marker: str = "A") -> str:
    return VALID_PROMPT.format(id=pid, version=version, marker=marker)


@pytest.fixture(autouse=True)
def _no_env_prompt_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROMPT_PATH_ENV, raising=False)


@pytest.fixture(scope="module")
def registry() -> PromptRegistry:
    return PromptRegistry(include_env=False)


# ---- built-ins -------------------------------------------------------------------------


def test_builtin_judge_prompts_are_the_four_forcebench_ones(registry: PromptRegistry) -> None:
    judges = sorted(p.ref for p in registry if p.meta.task == "judge")
    assert judges == [f"{pid}@1" for pid in BUILTIN_IDS]
    assert all(p.builtin for p in registry)
    tasks = {p.meta.task for p in registry}
    assert tasks == {"judge", "pairwise", "verify", "nli", "decompose"}


def test_builtin_pairwise_prompt_answers_a_b_or_tie(registry: PromptRegistry) -> None:
    p = registry.get("pairwise-preference@1")
    assert p.meta.task == "pairwise" and p.meta.labels == ["a", "b", "tie"]
    assert p.meta.variables == ["response_a", "response_b"]
    text = p.render({"response_a": "first <b>", "response_b": "second"})[-1].content
    assert text.index("first <b>") < text.index("second")


def test_generic_support_labels_and_scores(registry: PromptRegistry) -> None:
    p = registry.get("generic-support@1")
    assert p.id == "generic-support" and p.version == 1
    assert p.meta.labels == GENERIC_LABELS
    assert p.meta.scores == GENERIC_SCORES
    assert p.meta.output_schema == "SupportVerdict"
    assert p.output_model is SupportVerdict
    assert p.meta.variables == ["evidence", "claim"]
    assert p.meta.optional_variables == ["question"]


@pytest.mark.parametrize("pid", ["force-aware", "force-axis-free", "force-dummy-axis"])
def test_force_prompts_labels_and_scores(registry: PromptRegistry, pid: str) -> None:
    p = registry.get(f"{pid}@1")
    assert p.id == pid and p.version == 1
    assert p.meta.labels == FORCE_LABELS
    assert p.meta.scores == FORCE_SCORES
    assert p.meta.output_schema == "ForceVerdict"
    assert p.output_model is ForceVerdict


@pytest.mark.parametrize("pid", BUILTIN_IDS)
def test_sha256_is_hash_of_file_bytes(registry: PromptRegistry, pid: str) -> None:
    p = registry.get(pid)
    path = Path(p.path)
    assert path.parent == BUILTIN_DIR
    assert p.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    ident = p.identity()
    assert ident["sha256"] == p.sha256 and ident["id"] == pid and ident["version"] == 1
    assert ident["builtin"] is True


def test_sha256_changes_with_any_byte(tmp_path: Path) -> None:
    a = load_prompt_file(_write(tmp_path / "a", "p.prompt", _valid()))
    b = load_prompt_file(_write(tmp_path / "b", "p.prompt", _valid() + "\n"))
    assert a.ref == b.ref
    assert a.sha256 != b.sha256


# ---- rendering -------------------------------------------------------------------------


@pytest.mark.parametrize("pid", BUILTIN_IDS)
def test_render_without_question(registry: PromptRegistry, pid: str) -> None:
    msgs = registry.get(pid).render({"evidence": "EVIDENCE-TEXT-17", "claim": "CLAIM-TEXT-42"})
    assert [m.role for m in msgs] == ["system", "user"]
    assert msgs[0].content.strip()
    user = msgs[1].content
    assert "EVIDENCE-TEXT-17" in user and "CLAIM-TEXT-42" in user
    assert "Question the claim answers" not in user
    assert "Question" not in msgs[0].content


@pytest.mark.parametrize("pid", BUILTIN_IDS)
def test_render_with_question(registry: PromptRegistry, pid: str) -> None:
    msgs = registry.get(pid).render(
        {"evidence": "EVIDENCE-TEXT-17", "claim": "CLAIM-TEXT-42", "question": "WHY-QUESTION-9?"}
    )
    user = msgs[1].content
    assert "Question the claim answers" in user
    assert "WHY-QUESTION-9?" in user
    assert "EVIDENCE-TEXT-17" in user and "CLAIM-TEXT-42" in user
    # The question comes before the passage.
    assert user.index("WHY-QUESTION-9?") < user.index("EVIDENCE-TEXT-17")


@pytest.mark.parametrize("question", [None, ""])
def test_empty_or_none_question_omits_section(registry: PromptRegistry, question: object) -> None:
    msgs = registry.get("generic-support").render(
        {"evidence": "e", "claim": "c", "question": question}
    )
    assert "Question the claim answers" not in msgs[1].content


def test_render_is_deterministic(registry: PromptRegistry) -> None:
    p = registry.get("force-aware")
    v = {"evidence": "ev", "claim": "cl", "question": "q"}
    assert p.render(v) == p.render(dict(v))


@pytest.mark.parametrize(
    ("variables", "missing"),
    [
        ({"claim": "c"}, "evidence"),
        ({"evidence": "e"}, "claim"),
        ({"evidence": None, "claim": "c"}, "evidence"),
        ({}, "evidence"),
    ],
)
def test_missing_required_variable(
    registry: PromptRegistry, variables: dict[str, object], missing: str
) -> None:
    p = registry.get("generic-support@1")
    with pytest.raises(PromptError) as info:
        p.render(variables, where="pairs.jsonl:7 (raised)")
    text = str(info.value)
    assert "generic-support@1" in text
    assert f"'{missing}'" in text
    assert "pairs.jsonl:7 (raised)" in text
    assert info.value.field == missing
    assert info.value.file == p.path


def test_missing_variable_without_where(registry: PromptRegistry) -> None:
    with pytest.raises(PromptError, match="needs variable 'claim'"):
        registry.get("force-aware").render({"evidence": "e"})


# ---- user directories ------------------------------------------------------------------


def test_user_dir_adds_prompt(tmp_path: Path) -> None:
    d = tmp_path / "prompts"
    path = _write(d, "mine.prompt", _valid("my-prompt", 1))
    reg = PromptRegistry([d], include_env=False)
    assert len(reg) == len(PromptRegistry(include_env=False)) + 1
    p = reg.get("my-prompt@1")
    assert p.builtin is False
    assert p.path == str(path)
    assert p.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert reg.get("generic-support@1").builtin is True
    msgs = p.render({"evidence": "E1", "claim": "C1"})
    assert msgs[-1].content == "Evidence: E1\nClaim: C1"


def test_user_dir_accepts_str_paths(tmp_path: Path) -> None:
    d = tmp_path / "prompts"
    _write(d, "mine.prompt", _valid("my-prompt", 1))
    assert PromptRegistry([str(d)], include_env=False).get("my-prompt").id == "my-prompt"


def test_user_prompt_cannot_replace_builtin(tmp_path: Path) -> None:
    builtin = BUILTIN_DIR / "generic-support.v1.prompt"
    d = tmp_path / "prompts"
    clone = _write(d, "clone.prompt", builtin.read_text(encoding="utf-8") + "\nextra line\n")
    with pytest.raises(PromptError) as info:
        PromptRegistry([d], include_env=False)
    text = str(info.value)
    assert "generic-support@1" in text
    assert str(clone) in text
    assert str(builtin) in text


def test_identical_copy_of_builtin_is_fine(tmp_path: Path) -> None:
    builtin = BUILTIN_DIR / "force-aware.v1.prompt"
    d = tmp_path / "prompts"
    d.mkdir()
    (d / "copy.prompt").write_bytes(builtin.read_bytes())
    reg = PromptRegistry([d], include_env=False)
    assert len(reg) == len(PromptRegistry(include_env=False))
    assert reg.get("force-aware@1").sha256 == hashlib.sha256(builtin.read_bytes()).hexdigest()


def test_two_user_dirs_conflict(tmp_path: Path) -> None:
    _write(tmp_path / "a", "p.prompt", _valid("dup", 1, marker="A"))
    _write(tmp_path / "b", "p.prompt", _valid("dup", 1, marker="B"))
    with pytest.raises(PromptError, match="dup@1"):
        PromptRegistry([tmp_path / "a", tmp_path / "b"], include_env=False)


def test_env_prompt_path_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    _write(a, "one.prompt", _valid("env-one", 1))
    _write(b, "two.prompt", _valid("env-two", 3))
    monkeypatch.setenv(PROMPT_PATH_ENV, f"{a}:{b}")
    reg = PromptRegistry()
    assert reg.get("env-one").ref == "env-one@1"
    assert reg.get("env-two").ref == "env-two@3"
    with pytest.raises(PromptError):
        PromptRegistry(include_env=False).get("env-one")


def test_env_prompt_path_missing_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROMPT_PATH_ENV, str(tmp_path / "nope"))
    with pytest.raises(PromptError, match="does not exist") as info:
        PromptRegistry()
    assert str(tmp_path / "nope") in str(info.value)


def test_get_without_version_returns_newest(tmp_path: Path) -> None:
    d = tmp_path / "p"
    _write(d, "v1.prompt", _valid("multi", 1))
    _write(d, "v10.prompt", _valid("multi", 10))
    _write(d, "v2.prompt", _valid("multi", 2))
    reg = PromptRegistry([d], include_env=False)
    assert reg.get("multi").version == 10
    assert reg.get("multi@2").version == 2
    assert reg.get("multi@1").version == 1
    assert [p.version for p in reg if p.id == "multi"] == [1, 2, 10]


def test_unknown_ref_lists_known_prompts(registry: PromptRegistry) -> None:
    for ref in ("no-such-prompt", "generic-support@9"):
        with pytest.raises(PromptError) as info:
            registry.get(ref)
        text = str(info.value)
        assert repr(ref) in text
        for pid in BUILTIN_IDS:
            assert f"{pid}@1" in text


def test_bad_version_in_ref(registry: PromptRegistry) -> None:
    with pytest.raises(PromptError, match="version must be an integer"):
        registry.get("generic-support@latest")


# ---- malformed files -------------------------------------------------------------------

_CLAIM = "Claim: {{ claim }}"
_TASK = 'task = "judge"'

MALFORMED = {
    "no_front_matter": "=== user ===\n{{ claim }}\n",
    "bad_toml": '+++\nid = "x\nversion = 1\n+++\n=== user ===\nhi\n',
    "unknown_schema": _valid().replace('"LabelVerdict"', '"NoSuchVerdict"'),
    "score_for_unknown_label": _valid().replace("no = 0.0", "no = 0.0\nmaybe = 0.5"),
    "undeclared_variable": _valid().replace(_CLAIM, _CLAIM + " {{ mystery }}"),
    "jinja_syntax_error": _valid().replace(_CLAIM, "Claim: {% if claim %}{{ claim }}"),
    "missing_user_section": _valid().split("=== user ===")[0],
    "missing_score": _valid().replace("no = 0.0\n", ""),
    "score_out_of_range": _valid().replace("yes = 1.0", "yes = 1.5"),
    "unknown_front_matter_key": _valid().replace(_TASK, _TASK + '\ncolour = "red"'),
    "bad_task": _valid().replace(_TASK, 'task = "grade"'),
    "text_before_sections": _valid().replace("=== system ===", "stray\n=== system ==="),
    "duplicate_section": _valid() + "=== user ===\nagain\n",
    "output_schema_and_output": _valid().replace(
        "[scores]", '[output.label]\ntype = "enum"\nvalues = ["yes", "no"]\n[scores]'
    ),
    "bad_output_range": _valid()
    .replace('output_schema = "LabelVerdict"\n', "")
    .replace("[scores]", '[output.label]\ntype = "string"\nminimum = 1\n[scores]'),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_prompt_file(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path / "p", f"{case}.prompt", MALFORMED[case])
    with pytest.raises(PromptError) as info:
        load_prompt_file(path)
    assert str(path) in str(info.value)
    assert info.value.file == str(path)
    # The registry surfaces the same error for a user directory.
    with pytest.raises(PromptError) as info2:
        PromptRegistry([tmp_path / "p"], include_env=False)
    assert str(path) in str(info2.value)


def test_malformed_messages_are_specific(tmp_path: Path) -> None:
    def err(case: str) -> str:
        path = _write(tmp_path / case, "x.prompt", MALFORMED[case])
        with pytest.raises(PromptError) as info:
            load_prompt_file(path)
        return str(info.value)

    assert "front matter" in err("no_front_matter")
    assert "TOML" in err("bad_toml")
    assert "NoSuchVerdict" in err("unknown_schema")
    assert "maybe" in err("score_for_unknown_label")
    assert "mystery" in err("undeclared_variable")
    assert "syntax" in err("jinja_syntax_error")
    assert "user" in err("missing_user_section")
    assert "not both" in err("output_schema_and_output")
    assert "only for integer and number fields, not string" in err("bad_output_range")


def test_non_utf8_prompt_file(tmp_path: Path) -> None:
    path = tmp_path / "latin.prompt"
    path.write_bytes(_valid(marker="caf\xe9").encode("latin-1"))
    with pytest.raises(PromptError, match="UTF-8") as info:
        load_prompt_file(path)
    assert str(path) in str(info.value)


def test_prompt_without_system_section(tmp_path: Path) -> None:
    text = _valid().replace("=== system ===\nSystem text A.\n", "")
    p = load_prompt_file(_write(tmp_path, "nosys.prompt", text))
    msgs = p.render({"evidence": "E", "claim": "C"})
    assert [m.role for m in msgs] == ["user"]


@pytest.mark.parametrize("path", sorted(BUILTIN_DIR.glob("*.prompt")), ids=lambda p: p.name)
def test_every_builtin_passes_the_checks_a_user_prompt_gets(path: Path) -> None:
    """The registry builds a built-in's schema and templates when first used (a run uses
    one or two): the checks a user's prompt gets at load are made here instead."""
    prompt = load_prompt_file(path, builtin=True)  # check=True: schema, templates, variables
    lazy = PromptRegistry(include_env=False).get(prompt.ref)
    assert lazy.sha256 == prompt.sha256
    assert lazy.output_model.model_json_schema() == prompt.output_model.model_json_schema()
    assert lazy.identity() == prompt.identity()
