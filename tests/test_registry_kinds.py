"""Spec blocks name registered kinds: a judge, a verifier and a schema registered in this
module (with the decorators a plugin uses) run from a spec through `assay run`, and a
kind or key the registry does not know is one error line naming the file and field."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from pydantic import BaseModel, ConfigDict, Field

from assay.core.building import BuildContext, check_params, params_model
from assay.core.judging import JudgeItem, Judgment, Status
from assay.core.registry import (
    DECOMPOSERS,
    IMPORTERS,
    JUDGES,
    SCHEMAS,
    VERIFIERS,
    scoped_registries,
)
from assay.core.verification import ClaimToVerify, Verdict, VerdictLabel
from assay.datasets import AnswersDataset
from assay.errors import SpecError
from assay.prompts import PromptRegistry
from assay.runs import load_spec

# ---- a judge, a verifier and a schema, registered as a plugin would ---------------------


class NegationJudge:
    """Unsupported when the claim says 'not' and the evidence does not (a toy judge)."""

    def __init__(self, *, word: str = "not", label: str = "t-negation") -> None:
        self.word = word
        self._id = label

    @property
    def id(self) -> str:
        return self._id

    def describe(self) -> dict[str, Any]:
        return {"kind": "t-negation", "id": self.id, "word": self.word}

    async def __call__(self, item: JudgeItem) -> Judgment:
        clash = self.word in item.claim.split() and self.word not in item.evidence.split()
        label = "unsupported" if clash else "supported"
        return Judgment(status=Status.OK, label=label, score=0.0 if clash else 1.0)


class LengthParams(BaseModel):
    """The t-length verifier's keys."""

    model_config = ConfigDict(extra="forbid")

    min_words: int = Field(ge=1)
    name: str = "t-length"
    model: str | None = Field(default=None, description="Not a chat model: no endpoint check.")


class LengthVerifier:
    """Supported when the claim has at least `min_words` words (a toy verifier)."""

    def __init__(self, params: LengthParams) -> None:
        self.params = params

    @property
    def id(self) -> str:
        return self.params.name

    def describe(self) -> dict[str, Any]:
        return {"kind": "t-length", "id": self.id, "min_words": self.params.min_words}

    async def verify(self, item: ClaimToVerify) -> Verdict:
        ok = len(item.claim.split()) >= self.params.min_words
        label = VerdictLabel.SUPPORTED if ok else VerdictLabel.UNSUPPORTED
        return Verdict(status=Status.OK, label=label, score=1.0 if ok else 0.0)


def length_verifier(params: LengthParams, ctx: BuildContext) -> LengthVerifier:
    assert ctx.spec_path is not None and ctx.resolve("x").is_absolute()
    return LengthVerifier(params)


def shouting_answers(path: Path, /, *, name: str) -> AnswersDataset:
    """The jsonl format with every answer upper-cased (a toy importer)."""
    data = IMPORTERS.get("jsonl")(path, name=name)
    items = [item.model_copy(update={"answer": item.answer.upper()}) for item in data.items]
    shouted: AnswersDataset = data.model_copy(update={"items": items, "format": "t-shouting"})
    return shouted


class TVerdict(BaseModel):
    verdict: str


@pytest.fixture(autouse=True, scope="module")
def _registered_kinds() -> Iterator[None]:
    """Register as a plugin would, for this module only: registering at import time would
    show these kinds to every other test module (e.g. `assay list`)."""
    with scoped_registries():
        JUDGES.register("t-negation")(NegationJudge)
        VERIFIERS.register("t-length", description="claims of at least min_words words pass")(
            length_verifier
        )
        IMPORTERS.register("t-shouting")(shouting_answers)
        SCHEMAS.register("TVerdict")(TVerdict)
        yield


# ---- helpers ---------------------------------------------------------------------------


FORCE = '[[datasets]]\npath = "builtin:forcebench-demo"\n'
FACT = '[factuality]\ndatasets = [{ path = "builtin:factuality-demo" }]\n'


def _write_spec(tmp: Path, body: str) -> Path:
    path = tmp / "spec.toml"
    path.write_text(f'name = "t"\nbootstrap = 0\noutput_dir = "{tmp / "out"}"\n{body}')
    return path


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---- end to end ------------------------------------------------------------------------


def test_registered_judge_and_verifier_run_from_a_spec(tmp_path: Path) -> None:
    spec = _write_spec(
        tmp_path,
        FORCE
        + '[[judges]]\nkind = "t-negation"\nword = "causes"\n'
        + '[[baselines]]\nname = "token-overlap"\n'
        + FACT
        + '[[factuality.verifiers]]\nkind = "t-length"\nmin_words = 6\nmodel = "rules/v1"\n'
        + '[[factuality.verifiers]]\nkind = "overlap"\n',
    )
    code, out, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 0, out + err
    run = tmp_path / "out"
    judgments = _jsonl(run / "judgments.jsonl")
    by_judge = {j["judge_id"] for j in judgments}
    assert by_judge == {"t-negation", "baseline:token-overlap"}
    raised = [j for j in judgments if j["judge_id"] == "t-negation" and j["member"] == "raised"]
    assert raised and {j["label"] for j in raised} <= {"supported", "unsupported"}
    verdicts = [v for v in _jsonl(run / "verifications.jsonl") if v["verifier_id"] == "t-length"]
    claims = _jsonl(run / "claims.jsonl")
    assert len(verdicts) == len(claims) > 0
    for v in verdicts:  # the verifier really ran with min_words = 6 from the spec
        expected = "supported" if len(v["claim"].split()) >= 6 else "unsupported"
        assert v["label"] == expected
    manifest = json.loads((run / "manifest.json").read_text())
    described = {v["id"]: v for v in manifest["factuality"]["verifiers"]}
    assert described["t-length"]["min_words"] == 6


def test_judges_block_resolves_a_baseline_kind_with_its_params(tmp_path: Path) -> None:
    spec = _write_spec(tmp_path, FORCE + '[[judges]]\nkind = "baseline:token-overlap"\n')
    (tmp_path / "spec.toml").write_text(spec.read_text() + "threshold = 0.3\n")
    code, out, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 0, out + err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (judge,) = manifest["judges"]
    assert judge["id"] == "baseline:token-overlap" and judge["threshold"] == 0.3


def test_dry_run_plans_registered_kinds_without_a_model(tmp_path: Path) -> None:
    spec = _write_spec(
        tmp_path,
        FORCE
        + '[[judges]]\nkind = "t-negation"\n'
        + FACT
        + '[[factuality.verifiers]]\nkind = "t-length"\nmin_words = 2\n',
    )
    code, out, err = invoke(["run", str(spec), "--dry-run", "--format", "json"])
    assert code == 0, out + err
    rows = {r["id"]: r for r in json.loads(out)["rows"]}
    assert rows["t-negation"]["requests"] == 0 and rows["t-negation"]["items"] > 0
    assert rows["t-length"]["requests"] == 0 and rows["t-length"]["to_send"] == 0
    assert not (tmp_path / "out").exists()


# ---- one-line errors naming file and field ---------------------------------------------

BAD_SPECS = {
    "unknown-verifier": (
        FACT + 'verifiers = [{ kind = "oracle" }]\n',
        "factuality.verifiers[0].kind",
        "unknown verifier 'oracle'; known: ",
    ),
    "unknown-decomposer": (
        FACT + 'decomposer = { kind = "paragraph" }\nverifiers = [{ kind = "overlap" }]\n',
        "factuality.decomposer.kind",
        "unknown decomposer 'paragraph'",
    ),
    "unknown-format": (
        '[factuality]\ndatasets = [{ path = "builtin:factuality-demo", format = "weird" }]\n'
        'verifiers = [{ kind = "overlap" }]\n',
        "factuality.datasets[0].format",
        "unknown importer 'weird'; known: ",
    ),
    "unknown-judge": (FORCE + '[[judges]]\nkind = "oracle"\n', "judges[0].kind", "unknown judge"),
    "unknown-baseline": (
        FORCE + '[[baselines]]\nname = "bm25"\n',
        "baselines[0].name",
        "unknown baseline 'bm25'",
    ),
    "plugin-param-unknown": (
        FACT + 'verifiers = [{ kind = "t-length", min_words = 2, max_words = 9 }]\n',
        "factuality.verifiers[0].max_words",
        "Extra inputs are not permitted",
    ),
    "plugin-param-bad-value": (
        FACT + 'verifiers = [{ kind = "t-length", min_words = 0 }]\n',
        "factuality.verifiers[0].min_words",
        "greater than or equal to 1",
    ),
    "plugin-param-missing": (
        FACT + 'verifiers = [{ kind = "t-length" }]\n',
        "factuality.verifiers[0].min_words",
        "Field required",
    ),
    "signature-param-unknown": (
        FORCE + '[[judges]]\nkind = "t-negation"\nwords = ["x"]\n',
        "judges[0].words",
        "judge 't-negation' has no parameter 'words'; its parameters: word, label",
    ),
    "baseline-param-unknown": (
        FORCE + '[[baselines]]\nname = "token-overlap"\nparams = { penalty = 0.1 }\n',
        "baselines[0].params.penalty",
        "has no parameter 'penalty'",
    ),
    "builtin-key-of-another-kind": (
        FACT + 'verifiers = [{ kind = "overlap", corpus = "c.jsonl" }]\n',
        "factuality.verifiers[0].corpus",
        "Extra inputs are not permitted",
    ),
    "retrieval-without-corpus": (
        FACT + 'verifiers = [{ kind = "retrieval", model = "openai/x" }]\n',
        "factuality.verifiers[0].corpus",
        "Field required",
    ),
    "llm-judge-without-models": (
        FORCE + '[[judges]]\nprompts = ["force-aware@1"]\n',
        "judges[0].models",
        "Field required",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_bad_kind_or_key_is_one_line_naming_file_and_field(tmp_path: Path, case: str) -> None:
    body, field, message = BAD_SPECS[case]
    spec = _write_spec(tmp_path, body)
    code, out, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    located = re.match(
        rf"error: {re.escape(str(spec))}:\d+: field '{re.escape(field)}': ", lines[0]
    )
    assert located, lines[0]  # file, line and field
    assert message in lines[0]
    assert not (tmp_path / "out").exists()


def test_unknown_kind_lists_the_registered_ones(tmp_path: Path) -> None:
    spec = _write_spec(tmp_path, FACT + 'verifiers = [{ kind = "oracle" }]\n')
    with pytest.raises(SpecError) as exc:
        load_spec(spec)
    known = exc.value.message.split("known: ", 1)[1].split(", ")
    assert known == VERIFIERS.names()
    assert {"internal", "context", "retrieval", "nli", "nli-local", "overlap"} <= set(known)


# ---- the registries hold the built-ins ------------------------------------------------


def test_builtins_are_registered() -> None:
    assert {"llm", "baseline:token-overlap", "baseline:forcecheck-axis"} <= set(JUDGES)
    assert set(DECOMPOSERS.names()) >= {"sentence", "llm", "given"}
    assert set(VERIFIERS.names()) >= {"internal", "context", "retrieval", "nli", "overlap"}
    assert "nli-local" in VERIFIERS and "torch" not in VERIFIERS.info("nli-local").target
    assert {"SupportVerdict", "ForceVerdict", "LabelVerdict", "NLIVerdict", "ClaimList"} <= set(
        SCHEMAS
    )


def test_factory_forms_are_read_from_the_factory() -> None:
    assert params_model(length_verifier) is LengthParams
    assert params_model(NegationJudge) is None
    checked = check_params(length_verifier, {"min_words": "3"}, what="verifier 't-length'")
    assert isinstance(checked, LengthParams) and checked.min_words == 3
    with pytest.raises(SpecError) as exc:
        check_params(NegationJudge, {"wrod": "x"}, what="judge 't-negation'")
    assert exc.value.field == "wrod"


def test_a_registered_schema_serves_a_prompt(tmp_path: Path) -> None:
    (tmp_path / "p.prompt").write_text(
        '+++\nid = "t-schema"\nversion = 1\ntask = "judge"\nvariables = ["claim"]\n'
        'output_schema = "TVerdict"\nlabels = ["yes", "no"]\n[scores]\nyes = 1.0\nno = 0.0\n'
        "+++\n=== user ===\n{{ claim }}\n"
    )
    prompt = PromptRegistry([tmp_path]).get("t-schema@1")
    assert prompt.output_model is TVerdict


def test_a_registered_importer_is_a_spec_format(tmp_path: Path) -> None:
    rows = tmp_path / "answers.jsonl"
    rows.write_text(json.dumps({"id": "a1", "answer": "Water boils at 100 C.", "evidence": []}))
    spec = _write_spec(
        tmp_path,
        f'[factuality]\ndatasets = [{{ path = "{rows}", format = "t-shouting" }}]\n'
        '[[factuality.verifiers]]\nkind = "overlap"\n',
    )
    code, out, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 0, out + err
    (claim,) = _jsonl(tmp_path / "out" / "claims.jsonl")
    assert claim["claim"] == "WATER BOILS AT 100 C."
