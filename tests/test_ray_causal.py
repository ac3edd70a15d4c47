"""`[executor] kind = "ray"` for local causal-LM judges and dense retrieval embeddings:
a run whose hf/ judge, hf/ retrieval verifier and dense retrievers work in Ray actors
writes the in-process records and cache entries; a killed actor's request is re-sent
(none lost, none answered twice).

One Ray instance for the module (`ray.init(num_cpus=2)`), started here; tiny random
models from tests/_tiny_models.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
ray = pytest.importorskip("ray")

from _tiny_models import (  # noqa: E402
    chat_tokenizer,
    save_causal_lm,
    save_encoder,
    sentences,
)

from assay.models import (  # noqa: E402  # noqa: E402
    ChatRequest,
    Decoding,
    LocalCausalTransport,
    Model,
    ModelConfig,
    ResponseCache,
)
from assay.models._ray_options import ExecutorOptions  # noqa: E402
from assay.models._ray_pool import (  # noqa: E402
    BatchWorker,
    RayBatchPool,
    local_models_on,
    still_waiting,
)
from assay.models._ray_workers import CausalCall, CausalModelRecipe  # noqa: E402
from assay.prompts._prompt import Message  # noqa: E402
from assay.runs import Runner, RunOptions, load_spec, read_json  # noqa: E402

TIMING = re.compile(r'"(latency_s|recorded_at|[a-z_]*_at)":("[^"]*"|[-0-9.e+]+)')
RECORDS = ("judgments.jsonl", "verifications.jsonl", "gates.jsonl")
ON_RAY = '[executor]\nkind = "ray"\nnum_cpus = 0.5\n'
# what differs between two runs' manifests whatever ran their models
VARYING = {"run_id", "created_at", "updated_at", "finished_at", "sessions", "spec", "spec_path"}
VARYING |= {"spec_sha256", "spec_resolved", "cache", "outputs"}


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    # the actors unpickle this module's recipe by value: workers do not see tests/
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """In-process work with the thread count of the actors (num_cpus < 1: one thread)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A chat LM that sometimes ends early (so some answers are cached) and an encoder."""
    root = tmp_path_factory.mktemp("ray-causal")
    lm = save_causal_lm(
        root / "lm", chat_tokenizer(sentences()), eos_bias=2.0, max_position_embeddings=2048
    )
    return lm, save_encoder(root / "encoder")


def _inputs(root: Path) -> None:
    """Three forcebench pairs to judge, four answers with given claims, a corpus."""
    demo = Path(__file__).parents[1] / "assay" / "data" / "forcebench_demo.jsonl"
    (root / "pairs.jsonl").write_text("".join(demo.read_text().splitlines(True)[:3]))
    said = sentences()
    rows = [
        {
            "id": f"a{i}",
            "question": said[i],
            "answer": " ".join(said[i : i + 2]),
            "gold_claims": [{"id": f"c{k}", "text": said[i + k]} for k in range(2)],
        }
        for i in range(4)
    ]
    (root / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = [{"id": f"s{i:02d}", "text": t} for i, t in enumerate(said)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))


def _spec(root: Path, lm: Path, encoder: Path, extra: str = "") -> Path:
    _inputs(root)
    spec = root / f"spec{len(extra)}.toml"
    spec.write_text(
        f"""name = "ray-causal"
bootstrap = 0
[defaults]
max_tokens = 6
[[datasets]]
path = "pairs.jsonl"
[[judges]]
models = ["hf/{lm}"]
prompts = ["force-aware@1"]
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
decomposer = {{ kind = "given" }}
[[factuality.verifiers]]
kind = "retrieval"
model = "hf/{lm}"
corpus = "corpus.jsonl"
dense_model = "{encoder}"
top_k = 2
[gate]
model = "baseline:overlap"
corpus = "corpus.jsonl"
retriever = "dense"
dense_model = "{encoder}"
{extra}""",
        encoding="utf-8",
    )
    return spec


def _run(spec: Path, out: Path, cache: Path) -> tuple[list[str], dict[str, Any]]:
    """Each records file, timing fields blanked, and the manifest less what differs
    between any two runs (ids, times, paths, the spec itself, the judge's mean latency)."""
    options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    assert Runner(load_spec(spec), options).run().status == "complete"
    files = [TIMING.sub(r'"\1":0', (out / name).read_text(encoding="utf-8")) for name in RECORDS]
    manifest = {k: v for k, v in read_json(out / "manifest.json").items() if k not in VARYING}
    del manifest["judges"][0]["stats"]["mean_latency_s"]
    return files, manifest


def _cache_entries(directory: Path) -> dict[str, str]:
    import diskcache

    with diskcache.Cache(str(directory)) as cache:
        return {k: cache[k] for k in cache.iterkeys()}


def test_a_ray_run_writes_the_in_process_records_and_cache(
    ray_instance: Any, one_torch_thread: None, models: tuple[Path, Path], tmp_path: Path
) -> None:
    """The hf/ judge and retrieval verifier generate in one actor; the verifier's and the
    gate's dense retrievers embed in another (the same model: one pool). Records (whose
    gate candidates carry the dense cosine scores), cache entries and the models as the
    manifest describes them are those of the in-process run."""
    lm, encoder = models
    local = _run(_spec(tmp_path, lm, encoder), tmp_path / "l", tmp_path / "c-l")
    remote = _run(_spec(tmp_path, lm, encoder, ON_RAY), tmp_path / "r", tmp_path / "c-r")
    assert remote == local
    judgments, verifications, gates = (len(f.splitlines()) for f in remote[0])
    assert judgments >= 3 and verifications == 8 and gates == 4
    entries = _cache_entries(tmp_path / "c-r")
    assert entries == _cache_entries(tmp_path / "c-l") and len(entries) > 0
    # the judge's model as the actor loaded it: the same weights, dtype and template
    client = remote[1]["judges"][0]["client"]
    assert client["dtype"] == "torch.float32" and client["chat_template_sha256"]


def _request(text: str) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="system", content="Answer."), Message(role="user", content=text)],
        decoding=Decoding(temperature=0.0, max_tokens=8),
    )


@dataclass(frozen=True)
class DiesOnThirdCall:
    """An actor that exits its process on its third call, once per marker file."""

    inner: CausalModelRecipe
    marker: str

    def __call__(self) -> CausalCall:
        run, calls = self.inner(), itertools.count()

        def answer(request: Any) -> Any:
            if next(calls) == 2 and not os.path.exists(self.marker):
                Path(self.marker).touch()
                os._exit(1)
            return run(request)

        return answer


async def test_a_killed_actor_has_its_request_resent(
    ray_instance: Any, one_torch_thread: None, models: tuple[Path, Path], tmp_path: Path
) -> None:
    """The actor dies while answering the second request, which goes to a fresh actor:
    responses and cache entries are the in-process ones, none lost, none answered twice."""
    config, requests = ModelConfig(model=f"hf/{models[0]}"), [_request(s) for s in sentences()[:6]]
    caches = ResponseCache(tmp_path / "a"), ResponseCache(tmp_path / "b")
    local = Model(LocalCausalTransport(config), caches[0])
    with local_models_on(ExecutorOptions(kind="ray", num_cpus=0.5)):
        transport = LocalCausalTransport(config)
    assert isinstance(transport.generator, RayBatchPool)
    marker = tmp_path / "died"
    recipe = DiesOnThirdCall(CausalModelRecipe(config, threads=1), str(marker))
    pool = transport.generator = RayBatchPool(transport.generator.options, recipe, name="lm")
    remote = Model(transport, caches[1])
    try:
        want = [await local.complete(r) for r in requests]
        got = await asyncio.gather(*(remote.complete(r) for r in requests))
    finally:
        pool.close()
    assert marker.exists() and [r.response for r in got] == [r.response for r in want]
    assert pool.stats == {"chunks": 1 + len(requests), "resent": 1}  # identity, then each once
    for cache in caches:
        cache.flush()
    assert _cache_entries(tmp_path / "b") == _cache_entries(tmp_path / "a")
    assert len(caches[0]) > 0


@dataclass(frozen=True)
class Echo:
    """A model-free worker: each item back with the actor's process id."""

    def __call__(self) -> Callable[[int], tuple[int, int]]:
        def run(item: int) -> tuple[int, int]:
            time.sleep(0.1)
            return os.getpid(), item

        return run


def test_concurrent_calls_each_get_an_actor_of_their_own(ray_instance: Any) -> None:
    """What lets a causal LM answer `actors` requests at once: callers in other threads
    each wait for a free actor; every item is answered once, to its own caller."""
    pool = RayBatchPool(ExecutorOptions(kind="ray", actors=2, num_cpus=0.5), Echo(), name="echo")
    try:
        with ThreadPoolExecutor(4) as threads:
            answers = list(threads.map(pool.call, range(8)))
    finally:
        pool.close()
    assert [item for _, item in answers] == list(range(8))
    assert len({pid for pid, _ in answers}) == 2 and pool.stats == {"chunks": 8, "resent": 0}


def test_actors_the_cluster_has_no_room_for_are_one_line_naming_what_is_free(
    ray_instance: Any,
) -> None:
    options = ExecutorOptions(kind="ray", actors=2, num_cpus=3)  # the instance has 2
    actor = ray.remote(BatchWorker).options(num_cpus=3).remote(Echo())
    try:
        line = still_waiting(ray, [actor.ready.remote()], options, "hf/x", after_s=0.5)
    finally:
        ray.kill(actor)
    assert line is not None and "\n" not in line
    assert line.startswith("assay: hf/x: 1 of 1 Ray actors not ready after 0.5 s")
    # what is free depends on how soon Ray has taken back earlier tests' actors
    assert re.search(r"each asks 3 CPU, 0 GPU; free now: [0-9.]+ CPU, 0 GPU\)", line), line


def test_in_process_is_the_default_outside_a_ray_run(models: tuple[Path, Path]) -> None:
    config = ModelConfig(model=f"hf/{models[0]}")
    with local_models_on(ExecutorOptions(kind="local")):
        assert LocalCausalTransport(config).generator is None
    assert LocalCausalTransport(config).generator is None
