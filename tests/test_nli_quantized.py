"""The nli-local verifier's opt-in int8 dynamic quantisation (`quantize = "int8"`).

On the tiny random NLI model of tests/_tiny_models.py, loaded through the real
`from_pretrained` path: the quantised model loads with int8 Linear layers, gives the
same probabilities as torch's own quantize_dynamic applied to the checkpoint, is a model
of its own (fingerprint, cache keys, manifest) and is refused where it cannot run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _tiny_models import save_nli_model, sentences, wordpiece_tokenizer  # noqa: E402

from assay.core.answers import Passage  # noqa: E402
from assay.errors import ModelConfigError  # noqa: E402
from assay.models import ModelConfig, ResponseCache  # noqa: E402
from assay.models._local_ce import LocalRerankerTransport  # noqa: E402
from assay.models._local_nli import PairRequest  # noqa: E402
from assay.runs import Runner, RunOptions, load_spec, read_json  # noqa: E402
from assay.verifiers import ClaimToVerify  # noqa: E402
from assay.verifiers._nli_local import LocalNLIVerifier  # noqa: E402

PASSAGE = " ".join(sentences()[:6])
PAIRS = [(PASSAGE, claim) for claim in sentences()[6:14]]


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random weights spread wide enough that inputs get different probabilities."""
    root = tmp_path_factory.mktemp("quantized")
    tokenizer = wordpiece_tokenizer(sentences())
    return save_nli_model(root / "nli", tokenizer, initializer_range=0.2, classifier_scale=4.0)


def verifier(nli_dir: Path, **kwargs: Any) -> LocalNLIVerifier:
    return LocalNLIVerifier(f"hf-nli/{nli_dir}", **kwargs)


def items() -> list[ClaimToVerify]:
    return [
        ClaimToVerify(claim_id=str(i), claim=claim, evidence=[Passage(id="p", text=premise)])
        for i, (premise, claim) in enumerate(PAIRS)
    ]


def max_difference(rows: list[list[float]], other: list[list[float]]) -> float:
    return max(
        abs(a - b) for r, o in zip(rows, other, strict=True) for a, b in zip(r, o, strict=True)
    )


def torch_reference(nli_dir: Path) -> list[list[float]]:
    """Softmax of the checkpoint after torch's quantize_dynamic, with no assay code."""
    from torch.ao.quantization import quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(nli_dir)
    model = AutoModelForSequenceClassification.from_pretrained(nli_dir).eval()
    model = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    out = []
    with torch.inference_mode():
        for premise, claim in PAIRS:
            enc = tokenizer(premise, claim, truncation=True, return_tensors="pt")
            out.append(model(**enc).logits.softmax(-1)[0].tolist())
    return out


def test_quantised_model_loads_int8_linear_layers_and_matches_torch(nli_dir: Path) -> None:
    """One pair a batch, as the reference runs them: int8 activations are scaled per
    batch, so a pair's scores in a padded batch move a little with its batch-mates."""
    int8 = verifier(nli_dir, quantize="int8", batch_size=1)
    int8.preflight()
    kinds = {type(m).__module__ for m in int8.transport._model.modules()}
    assert "torch.ao.nn.quantized.dynamic.modules.linear" in kinds
    assert not any(type(m) is torch.nn.Linear for m in int8.transport._model.modules())
    rows, lengths = int8.transport.score_pairs(PAIRS)
    assert len(rows) == len(PAIRS) and all(n > 0 for n in lengths)
    for row in rows:
        assert len(row) == 3 and all(0.0 <= p <= 1.0 for p in row)
        assert sum(row) == pytest.approx(1.0, abs=1e-5)
    assert max_difference(rows, torch_reference(nli_dir)) < 1e-5
    fp32_rows, _ = verifier(nli_dir).transport.score_pairs(PAIRS)
    assert max_difference(rows, fp32_rows) > 0.0  # the int8 model really ran, not fp32


def test_verdicts_are_ordinary_verdicts(nli_dir: Path) -> None:
    verdicts = asyncio.run(verifier(nli_dir, quantize="int8").verify_many(items()))
    assert [v.status for v in verdicts] == ["ok"] * len(PAIRS)
    for v in verdicts:
        probs = (v.parsed or {})["best_chunk_probs"]
        assert set(probs) == {"entailment", "neutral", "contradiction"}
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)


def test_fingerprint_cache_keys_and_description_differ_from_fp32(nli_dir: Path) -> None:
    fp32, int8 = verifier(nli_dir), verifier(nli_dir, quantize="int8")
    source = fp32.transport.files.fingerprint()
    assert fp32.fingerprint() == source  # full precision: the checkpoint's own fingerprint
    assert int8.fingerprint() not in (source, "")
    assert int8.fingerprint() == verifier(nli_dir, quantize="int8").fingerprint()
    request = PairRequest(premise=PASSAGE, hypothesis="The appeal is pending.")
    assert fp32.transport.cache_key(request) != int8.transport.cache_key(request)
    described, plain = int8.describe(), fp32.describe()
    assert described["fingerprint"] == int8.fingerprint() != plain["fingerprint"]
    assert described["quantize"]["scheme"] == "int8"
    assert described["quantize"]["source_fingerprint"] == source
    assert described["quantize"]["engine"] == torch.backends.quantized.engine
    assert "quantize" not in plain


def test_a_shared_cache_never_serves_one_precision_to_the_other(
    nli_dir: Path, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache")
    fp32 = asyncio.run(verifier(nli_dir, cache=cache).verify_many(items()))
    int8 = asyncio.run(verifier(nli_dir, cache=cache, quantize="int8").verify_many(items()))
    assert not any(v.cache_hit for v in int8)
    assert [v.score for v in int8] != [v.score for v in fp32]
    again = asyncio.run(verifier(nli_dir, cache=cache, quantize="int8").verify_many(items()))
    assert all(v.cache_hit for v in again)
    assert [v.score for v in again] == [v.score for v in int8]


def test_a_run_records_each_precision_as_its_own_model(nli_dir: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    row = {"id": "a1", "answer": "The appeal is pending. The court held that the contract was "
           "void.", "evidence": [{"id": "p1", "text": PASSAGE}]}  # fmt: skip
    answers.write_text(json.dumps(row) + "\n", encoding="utf-8")
    spec = tmp_path / "nli.toml"
    blocks = "".join(
        f'[[factuality.verifiers]]\nkind = "nli-local"\nname = "{name}"\n'
        f'model = "hf-nli/{nli_dir}"\n{extra}\n'
        for name, extra in (("fp32", ""), ("int8", 'quantize = "int8"'))
    )
    spec.write_text(
        'name = "q"\nbootstrap = 0\n[factuality]\ndatasets = [{ path = "answers.jsonl" }]\n'
        + blocks,
        encoding="utf-8",
    )
    out = tmp_path / "run"
    options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(tmp_path / "c"))
    assert Runner(load_spec(spec), options).run().status == "complete"
    described = {v["id"]: v for v in read_json(out / "manifest.json")["factuality"]["verifiers"]}
    assert described["int8"]["fingerprint"] != described["fp32"]["fingerprint"]
    assert described["int8"]["quantize"]["source_fingerprint"] == described["fp32"]["fingerprint"]
    records = [json.loads(x) for x in (out / "verifications.jsonl").read_text().splitlines()]
    scores = {v: [r["score"] for r in records if r["verifier_id"] == v] for v in ("fp32", "int8")}
    assert len(scores["fp32"]) == len(scores["int8"]) == 2
    assert scores["fp32"] != scores["int8"]  # neither was served the other's cached scores
    assert not any(r["cache_hit"] for r in records)


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "mps"])
def test_refused_on_a_device_other_than_the_cpu(nli_dir: Path, device: str) -> None:
    with pytest.raises(ModelConfigError) as err:
        verifier(nli_dir, device=device, quantize="int8")
    message = str(err.value)
    assert "\n" not in message and "quantize = 'int8'" in message and repr(device) in message


def test_refused_when_auto_resolves_to_cuda(nli_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'auto' is only known to be cuda at load time: refused then, before any weights
    move (this machine has no CUDA; torch is told it has)."""
    int8 = verifier(nli_dir, device="auto", quantize="int8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(ModelConfigError, match=r"runs on the CPU only .* device 'cuda'"):
        int8.preflight()
    assert int8.transport._model is None


def test_refused_without_a_quantised_engine(nli_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    quantized = type(torch.backends.quantized)
    monkeypatch.setattr(quantized, "engine", property(lambda self: "none"))
    with pytest.raises(ModelConfigError, match="no quantised CPU engine"):
        verifier(nli_dir, quantize="int8").preflight()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"quantize": "int4"}, "quantize must be one of int8 (or absent for full precision)"),
        ({"quantize": "int8", "dtype": "float16"}, "drop dtype = 'float16'"),
    ],
)
def test_bad_values_are_one_line_naming_quantize(
    nli_dir: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ModelConfigError) as err:
        verifier(nli_dir, **kwargs)
    assert "\n" not in str(err.value) and message in str(err.value)


def test_model_config_key_is_for_hf_nli_only(nli_dir: Path) -> None:
    config = ModelConfig(model=f"hf-ce/{nli_dir}", extra_body={"quantize": "int8"})
    with pytest.raises(ModelConfigError, match=r"\['quantize'\] are not used by hf-ce models"):
        LocalRerankerTransport(config)


def test_spec_value_is_checked_as_one_line_naming_the_field(
    nli_dir: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assay.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "answers.jsonl").write_text(
        json.dumps({"id": "a", "answer": "x.", "evidence": []}) + "\n", encoding="utf-8"
    )
    spec = tmp_path / "bad.toml"
    spec.write_text(
        'name = "bad"\n[factuality]\ndatasets = [{ path = "answers.jsonl" }]\n'
        f'[[factuality.verifiers]]\nkind = "nli-local"\nmodel = "hf-nli/{nli_dir}"\n'
        'quantize = "int4"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(sys, "argv", ["assay", "run", str(spec), "--dry-run"])
    with pytest.raises(SystemExit) as exited:
        main()
    out, err = capfd.readouterr()
    lines = (out + err).strip().splitlines()
    assert exited.value.code == 2 and len(lines) == 1, out + err
    assert lines[0].startswith(f"error: {spec}") and "quantize" in lines[0], lines[0]


def test_the_int8_benchmark_measures_agreement_on_the_bundled_data(
    nli_dir: Path, tmp_path: Path
) -> None:
    """benchmarks/bench_nli.py --int8, its agreement part on a few bundled claims."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import _bench_nli_int8 as bench

    items = bench.demo_items()
    assert len(items) > 8 and all(i.evidence and i.claim for i in items)
    result = bench.agreement(nli_dir, items[:5], 4)
    assert result["claims"] == 5 and result["pairs"] >= 5
    assert sum(result["fp32_pair_labels"].values()) == result["pairs"]
    assert 0.0 <= result["pair_label_agreement"] <= 1.0
    assert 0.0 < result["max_abs_diff_p_entail"] < 1.0
    assert bench.wice_items(tmp_path, None) is None  # absent data: skipped, not an error
