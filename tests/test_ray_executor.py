"""`[executor] kind = "ray"`: local NLI batches scored by Ray actors give the records and
cache entries of the in-process path, a killed actor's batches are re-sent (none lost,
none scored into the results twice), and without Ray the spec fails in one line.

One Ray instance for the module (`ray.init(num_cpus=2)`), started here; tiny random
models from tests/_tiny_models.py.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
ray = pytest.importorskip("ray")

from _cli import invoke  # noqa: E402
from _tiny_models import (  # noqa: E402
    CORPUS,
    save_nli_model,
    save_reranker,
    sentences,
    word_tokenizer,
    wordpiece_tokenizer,
)

from assay.core.answers import Passage  # noqa: E402
from assay.errors import ModelConfigError, SpecError  # noqa: E402
from assay.models import ResponseCache  # noqa: E402
from assay.models._ray_options import ExecutorOptions  # noqa: E402
from assay.models._ray_pool import RayBatchPool  # noqa: E402
from assay.models._ray_workers import PairChunk, PairModelRecipe  # noqa: E402
from assay.runs import RunOptions, load_spec  # noqa: E402
from assay.runs.runner._runner import Runner  # noqa: E402
from assay.runs.store._resume import normalised_spec, spec_changes  # noqa: E402
from assay.verifiers import ClaimToVerify  # noqa: E402
from assay.verifiers._nli_local import LocalNLIVerifier  # noqa: E402

TIMING = re.compile(rb'"(latency_s|recorded_at)":("[^"]*"|[-0-9.e+]+)')
RAY = '[executor]\nkind = "ray"\nactors = 2\n'


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    # the actors unpickle this module's recipe by value: workers do not see tests/
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """In-process scoring with the thread count of a one-CPU actor: float32 sums depend
    on how many threads share them (the gate's logits differ in the last bit at 2 vs 1)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ray-nli")
    return save_nli_model(root / "nli", wordpiece_tokenizer(sentences()))


@pytest.fixture(scope="module")
def ce_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_reranker(tmp_path_factory.mktemp("ray-ce") / "ce", word_tokenizer())


def _inputs(root: Path) -> None:
    """Six answers of three sentences over two passages each (~70 pairs, ~18 batches of
    4), each with a question for the gate, and the gate's corpus."""
    said = sentences()
    rows = []
    for i in range(6):
        passages = [{"id": f"p{k}", "text": " ".join(said[i + k : i + k + 4])} for k in range(2)]
        answer = " ".join(said[(i * 3) % len(said) :][:3])
        rows.append({"id": f"a{i}", "question": said[i], "answer": answer, "evidence": passages})
    (root / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = [{"id": f"s{i:02d}", "text": t} for i, t in enumerate(said)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))


def _spec(root: Path, nli_dir: Path, extra: str = "", ce_dir: Path | None = None) -> Path:
    _inputs(root)
    gate = f'[gate]\nmodel = "hf-ce/{ce_dir}"\ncorpus = "corpus.jsonl"\n' if ce_dir else ""
    spec = root / f"spec{len(extra)}.toml"
    spec.write_text(
        f"""name = "ray-nli"
bootstrap = 0
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
[[factuality.verifiers]]
kind = "nli-local"
model = "hf-nli/{nli_dir}"
batch_size = 4
{gate}{extra}""",
        encoding="utf-8",
    )
    return spec


def _run(spec: Path, out: Path, cache: Path) -> tuple[list[bytes], list[dict[str, int]]]:
    """The verifications and gates files with timing fields blanked; the verifier's and
    the reranker's model stats, then their Ray pools' (none in-process)."""
    runner = Runner(
        load_spec(spec), RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    )
    assert runner.factuality is not None and runner.gate is not None
    verifier = runner.factuality.verifiers[0].transport  # type: ignore[attr-defined]
    transports = [verifier, runner.gate.scorer.reranker.transport.pairs]  # type: ignore[attr-defined]
    pools = [t.batch_runner for t in transports if t.batch_runner is not None]
    try:
        assert runner.run().status == "complete"
    finally:
        for pool in pools:
            pool.close()
    files = [(out / name).read_bytes() for name in ("verifications.jsonl", "gates.jsonl")]
    blanked = [TIMING.sub(rb'"\1":0', data) for data in files]
    return blanked, [dict(t.stats) for t in transports] + [dict(p.stats) for p in pools]


def _cache_entries(directory: Path) -> dict[str, str]:
    import diskcache

    with diskcache.Cache(str(directory)) as cache:
        return {k: cache[k] for k in cache.iterkeys()}


def test_ray_run_writes_the_in_process_records_and_cache(
    ray_instance: Any, one_torch_thread: None, nli_dir: Path, ce_dir: Path, tmp_path: Path
) -> None:
    """The nli-local verifier and the gate's reranker, two actors each (half a CPU)."""
    on_ray = RAY + "num_cpus = 0.5\n"
    local = _run(_spec(tmp_path, nli_dir, ce_dir=ce_dir), tmp_path / "l", tmp_path / "c-l")
    remote = _run(_spec(tmp_path, nli_dir, on_ray, ce_dir), tmp_path / "r", tmp_path / "c-r")
    (verifications, gates), (nli, ce, *pools) = remote
    assert verifications == local[0][0] and len(verifications.splitlines()) >= 12
    assert gates == local[0][1] and len(gates.splitlines()) == 6
    assert [nli, ce] == local[1] and nli["batches"] > 4 and ce["pairs"] > 6
    # every batch went to Ray, none twice
    assert pools == [
        {"chunks": nli["batches"], "resent": 0},
        {"chunks": ce["batches"], "resent": 0},
    ]
    entries = _cache_entries(tmp_path / "c-r")
    assert entries == _cache_entries(tmp_path / "c-l")
    assert len(entries) == nli["pairs"] + ce["pairs"]


@dataclass(frozen=True)
class DiesOnSecondBatch:
    """A worker that exits the process on its second batch, once per marker file."""

    inner: PairModelRecipe
    marker: str

    def __call__(self) -> Callable[[PairChunk], list[list[float]]]:
        score, calls = self.inner(), itertools.count()

        def scorer(chunk: PairChunk) -> list[list[float]]:
            if next(calls) == 1 and not os.path.exists(self.marker):
                Path(self.marker).touch()
                os._exit(1)
            return score(chunk)

        return scorer


def _claims() -> list[ClaimToVerify]:
    said = sentences()
    passages = [Passage(id=f"p{k}", text=" ".join(said[k : k + 3])) for k in range(3)]
    return [ClaimToVerify(claim_id=f"c{i}", claim=s, evidence=passages) for i, s in enumerate(said)]


def _dump(verdicts: list[Any]) -> list[dict[str, Any]]:
    return [v.model_dump(mode="json", exclude={"latency_s"}) for v in verdicts]


async def test_a_killed_worker_has_its_batch_resent_to_a_new_actor(
    ray_instance: Any, one_torch_thread: None, nli_dir: Path, tmp_path: Path
) -> None:
    """One actor exits mid-run (on its second batch); later its replacement is killed
    between calls. Verdicts, model stats and cache entries stay those of the in-process
    verifier: no batch lost, none scored into the results twice."""
    model, claims = f"hf-nli/{nli_dir}", _claims()
    caches = ResponseCache(tmp_path / "a"), ResponseCache(tmp_path / "b")
    local = LocalNLIVerifier(model, batch_size=4, cache=caches[0])
    remote = LocalNLIVerifier(model, batch_size=4, cache=caches[1])
    marker = tmp_path / "died"
    recipe = DiesOnSecondBatch(PairModelRecipe.of(remote.transport, threads=1), str(marker))
    pool = RayBatchPool(ExecutorOptions(kind="ray", actors=1), recipe, name=model)
    remote.transport.batch_runner = pool
    pairs = [(CORPUS[:80], "Birds fly."), (CORPUS[80:200], "The bridge opens.")]
    try:
        want, got = await local.verify_many(claims), await remote.verify_many(claims)
        assert marker.exists() and pool.stats["resent"] == 1
        ray.kill(pool.actors[0])
        assert remote.pair_probabilities(pairs) == local.pair_probabilities(pairs)
    finally:
        pool.close()
    assert pool.stats["resent"] == 2
    assert _dump(got) == _dump(want)
    assert remote.stats == local.stats  # pairs, batches, tokens: each scored once
    assert pool.stats["chunks"] == local.stats["batches"] > 10
    # every pair the verifier scored is one cache entry (the 2 scored directly are not cached)
    assert len(caches[1]) == len(caches[0]) == local.stats["pairs"] - len(pairs) > 0


@dataclass(frozen=True)
class CannotStart:
    """An actor whose process ends while it starts (as when a node lacks assay)."""

    def __call__(self) -> Callable[[PairChunk], list[list[float]]]:
        os._exit(3)


def test_actors_that_cannot_start_are_one_model_error(ray_instance: Any) -> None:
    pool = RayBatchPool(ExecutorOptions(kind="ray"), CannotStart(), name="hf-nli/x")
    with pytest.raises(ModelConfigError) as caught:
        pool.start()
    assert caught.value.message.startswith("hf-nli/x: Ray actors could not start: ")
    assert "\n" not in caught.value.message and pool.actors == []


def test_without_ray_the_spec_fails_in_one_line_naming_the_extra(
    nli_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(tmp_path, nli_dir, RAY)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    code, out, err = invoke(["run", str(spec), "--output-dir", str(tmp_path / "out")])
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert str(spec) in err and "executor.kind" in err and "assay[ray]" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ('[executor]\nkind = "local"\nactors = 2\n', "executor"),
        ('[executor]\nkind = "ray"\nactor = 2\n', "executor.actor"),
        ('[executor]\nkind = "dask"\n', "executor.kind"),
        ('[executor]\nkind = "ray"\nnum_gpus = -1\n', "executor.num_gpus"),
    ],
)
def test_a_bad_executor_block_is_one_error_naming_the_field(
    nli_dir: Path, tmp_path: Path, block: str, field: str
) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(_spec(tmp_path, nli_dir, block))
    assert caught.value.field == field


def test_where_models_run_is_not_a_change_to_the_run(nli_dir: Path, tmp_path: Path) -> None:
    """--resume accepts a run started in-process and continued on Ray (or back)."""
    plain = load_spec(_spec(tmp_path, nli_dir)).raw
    on_ray = load_spec(_spec(tmp_path, nli_dir, RAY)).raw
    assert spec_changes(normalised_spec(plain), normalised_spec(on_ray)) == []
    on_ray["factuality"]["verifiers"][0]["batch_size"] = 8
    assert spec_changes(normalised_spec(plain), normalised_spec(on_ray)) != []
