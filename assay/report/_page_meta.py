"""The HTML report's header and reproducibility box as typed data, from manifest.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay._values import (
    as_float,
    as_int,
    count,
    dict_of,
    duration,
    kv_items,
    list_of,
    money,
)
from assay.report._page_fact import model_of


@dataclass(frozen=True)
class DataFile:
    """A dataset or answers file: what the header and the repro box say about it."""

    name: object
    path: object
    sha256: object
    rows: int | None
    format: object = None


def data_files(entries: object) -> tuple[DataFile, ...]:
    return tuple(
        DataFile(
            d.get("name"), d.get("path"), d.get("sha256"), as_int(d.get("rows")), d.get("format")
        )
        for d in map(dict_of, list_of(entries))
    )


@dataclass(frozen=True)
class Header:
    name: str
    status: str
    run_id: object
    message: object
    created: object
    finished: object
    took: str | None
    updated: object
    assay_version: object
    git: dict[str, Any]
    datasets: tuple[DataFile, ...]
    answers: tuple[DataFile, ...]
    judgments: tuple[object, object] | None
    verifications: tuple[object, object] | None
    warnings: tuple[object, ...]

    @property
    def badge(self) -> str:
        return {"complete": "ok", "failed": "bad"}.get(self.status, "warn")


def header(manifest: Mapping[str, Any], *, forcebench: bool, factuality: bool) -> Header:
    env = dict_of(manifest.get("environment"))
    fact = dict_of(manifest.get("factuality"))
    finished = manifest.get("finished_at")
    return Header(
        name=str(manifest.get("name") or "unnamed run"),
        status=str(manifest.get("status") or "unknown"),
        run_id=manifest.get("run_id"),
        message=manifest.get("message"),
        created=manifest.get("created_at"),
        finished=finished,
        took=duration(manifest.get("created_at"), finished) if finished else None,
        updated=manifest.get("updated_at"),
        assay_version=env.get("assay_version"),
        git=dict_of(env.get("git")),
        datasets=data_files(manifest.get("datasets")),
        answers=data_files(fact.get("datasets")),
        judgments=(
            (manifest.get("recorded_judgments"), manifest.get("planned_judgments"))
            if forcebench
            else None
        ),
        verifications=(
            (fact.get("recorded_verifications"), fact.get("planned_verifications"))
            if factuality
            else None
        ),
        warnings=tuple(list_of(manifest.get("warnings"))),
    )


@dataclass(frozen=True)
class Client:
    provider: object
    model: object
    api_base: object
    timeout_s: object
    max_concurrency: object
    max_attempts: object
    structured_output: object


def client(info: Mapping[str, Any]) -> Client | None:
    c = dict_of(info.get("client"))
    if not c:
        return None
    return Client(
        provider=c.get("provider") or c.get("kind"),
        model=c.get("model"),
        api_base=c.get("api_base"),
        timeout_s=c.get("timeout_s"),
        max_concurrency=c.get("max_concurrency"),
        max_attempts=dict_of(c.get("retry")).get("max_attempts"),
        structured_output=c.get("structured_output"),
    )


@dataclass(frozen=True)
class Component:
    """What a judge, decomposer or verifier was, to run it again: one repro table row."""

    role: str | None
    id: object
    kind: object
    name: object
    version: object
    model: str | None
    client: Client | None
    decoding: dict[str, Any]
    params: list[str]
    output_cap: object
    prompt: dict[str, Any]
    parser: object
    parser_version: object
    threshold: object
    stats: str | None
    retriever: Retriever | None


_JUDGE_HANDLED = frozenset({"id", "name", "kind", "stats", "version"})
_STAGE_HANDLED = frozenset(
    {"id", "kind", "name", "client", "model", "prompt", "decoding", "output_cap_tokens"}
    | {"parser", "parser_version", "threshold", "retriever", "top_k", "stats"}
)


def component(info: Mapping[str, Any], role: str | None = None) -> Component:
    """`role` None: a ForceBench judge; else "decomposer" or "verifier"."""
    handled = _JUDGE_HANDLED if role is None else _STAGE_HANDLED
    retriever = dict_of(info.get("retriever"))
    return Component(
        role=role,
        id=info.get("id"),
        kind=info.get("kind"),
        name=info.get("name"),
        version=info.get("version"),
        model=model_of(info),
        client=client(info),
        decoding=dict_of(info.get("decoding")),
        params=kv_items({k: v for k, v in info.items() if k not in handled}),
        output_cap=info.get("output_cap_tokens"),
        prompt=dict_of(info.get("prompt")),
        parser=info.get("parser"),
        parser_version=info.get("parser_version"),
        threshold=info.get("threshold"),
        stats=None if role is None else stage_stats(dict_of(info.get("stats"))),
        retriever=retriever_of(retriever, info.get("top_k")) if retriever else None,
    )


def stage_stats(stats: Mapping[str, Any]) -> str | None:
    """`recorded 12 / 14 · requests 12 · cache hits 0 · retries 0 · $0.0100`."""
    if not stats:
        return None
    bits = [f"recorded {count(stats.get('recorded'))}"]
    if stats.get("planned") is not None:
        bits[0] += f" / {count(stats.get('planned'))}"
    if as_int(stats.get("requests_sent")):
        bits.append(f"requests {count(stats.get('requests_sent'))}")
        bits.append(f"cache hits {count(stats.get('cache_hits'))}")
        bits.append(f"retries {count(stats.get('retries'))}")
    if as_float(stats.get("cost_usd")) is not None:
        bits.append(money(stats.get("cost_usd")))
    return " · ".join(bits)


@dataclass(frozen=True)
class Retriever:
    kind: object
    method: object
    top_k: object
    corpus: dict[str, Any]
    params: list[str]
    components: tuple[tuple[str, object, dict[str, Any]], ...]  # name, model/kind, corpus


def retriever_of(retriever: Mapping[str, Any], top_k: object) -> Retriever:
    """Kind, corpus and the scalar parameters of a retriever (components for a hybrid)."""
    scalars = {
        k: v
        for k, v in retriever.items()
        if k not in ("kind", "method", "corpus", "components", "formula", "idf")
        and not isinstance(v, Mapping | list)
    }
    tokenizer = dict_of(retriever.get("tokenizer"))
    if tokenizer.get("name"):
        scalars["tokenizer"] = f"{tokenizer['name']}/{tokenizer.get('version') or '?'}"
    corpus = dict_of(retriever.get("corpus"))
    components = []
    shown = bool(corpus)
    for name, comp in dict_of(retriever.get("components")).items():
        comp = dict_of(comp)
        what = dict_of(comp.get("embedder")).get("model_dir") or comp.get("kind")
        own = dict_of(comp.get("corpus")) if not shown else {}
        shown = shown or bool(own)
        components.append((str(name), what, own))
    return Retriever(
        kind=retriever.get("kind") or "retriever",
        method=retriever.get("method"),
        top_k=top_k,
        corpus=corpus,
        params=kv_items(scalars) if scalars else [],
        components=tuple(components),
    )


@dataclass(frozen=True)
class Repro:
    spec_path: object
    spec_sha256: object
    parser_version: object | None  # None: not a ForceBench run
    bootstrap: object
    seed: object
    datasets: tuple[DataFile, ...]
    answers: tuple[DataFile, ...]
    git: dict[str, Any]
    env: dict[str, Any]
    packages: tuple[str, ...]
    settings: tuple[tuple[str, list[str]], ...]  # cache, failure policy, reparses
    judges: tuple[Component, ...]
    stages: tuple[Component, ...]
    factuality: bool


def _settings(manifest: Mapping[str, Any]) -> tuple[tuple[str, list[str]], ...]:
    out = []
    if dict_of(manifest.get("cache")):
        out.append(("cache", kv_items(manifest["cache"])))
    if manifest.get("failure_policy"):
        out.append(("failure policy", kv_items(manifest["failure_policy"])))
    out += [("reparse", kv_items(rp)) for rp in list_of(manifest.get("reparses"))]
    return tuple(out)


def repro(manifest: Mapping[str, Any], order: Sequence[str], *, forcebench: bool) -> Repro:
    env = dict_of(manifest.get("environment"))
    spec = dict_of(manifest.get("spec"))
    fact = dict_of(manifest.get("factuality"))
    by_id = {str(dict_of(j).get("id")): dict_of(j) for j in list_of(manifest.get("judges"))}
    judges = [by_id[j] for j in order if j in by_id]
    judges += [j for jid, j in by_id.items() if jid not in set(order)]
    stages = (
        [component(dict_of(fact["decomposer"]), "decomposer")] if fact.get("decomposer") else []
    )
    stages += [component(dict_of(v), "verifier") for v in list_of(fact.get("verifiers"))]
    packages = dict_of(env.get("packages"))
    return Repro(
        spec_path=manifest.get("spec_path"),
        spec_sha256=manifest.get("spec_sha256"),
        parser_version=(manifest.get("parser_version") or "—") if forcebench else None,
        bootstrap=spec.get("bootstrap", 1000),
        seed=spec.get("seed", 0),
        datasets=data_files(manifest.get("datasets")),
        answers=data_files(fact.get("datasets")),
        git=dict_of(env.get("git")),
        env=env,
        packages=tuple(f"{k} {v}" for k, v in packages.items() if v is not None),
        settings=_settings(manifest),
        judges=tuple(component(j) for j in judges),
        stages=tuple(stages),
        factuality=bool(fact),
    )


__all__ = ["Header", "Repro", "header", "repro"]
