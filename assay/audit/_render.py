"""A recorded request rendered again: the judge's prompt (from the bytes the run
recorded), its decoding and client from the manifest, the variables from the dataset
row, then the cache key, as `LLMJudge.request_for_variables` and `Model.complete` make it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.audit._inputs import dataset_files, prompt_source
from assay.core.manifest import Manifest
from assay.core.pairs import Member
from assay.core.rundir import file_sha256
from assay.datasets import load_answers, load_items, load_pairs
from assay.errors import AssayError
from assay.models import Decoding, ModelConfig, cache_key
from assay.models._types import ChatRequest
from assay.prompts import Prompt, load_prompt_file
from assay.runs.rebuild._sources import answers_options, dataset_info, items_options


class Renderer:
    """One judge's request, rendered for any variables, and its cache key checked."""

    def __init__(
        self, prompt: Prompt, config: ModelConfig, modes: list[str], entry: dict[str, Any]
    ) -> None:
        self.prompt, self.config, self.modes = prompt, config, modes
        self.kind = str(entry.get("kind"))
        self.decoding = Decoding.model_validate(entry.get("decoding") or {})
        self.sample_index = int(entry.get("sample_index") or 0)
        # a judge asks for its output schema; a decomposer's output is line-based: none
        judge = entry.get("kind") == "llm"
        self.schema = prompt.output_model.model_json_schema() if judge else None

    def keys(self, variables: dict[str, Any]) -> set[str]:
        request = ChatRequest.model_construct(
            messages=self.prompt.render(variables),
            decoding=self.decoding,
            response_schema=self.schema,
            output_model=self.prompt.output_model if self.schema is not None else None,
            schema_name=self.prompt.meta.output_schema,
            sample_index=self.sample_index,
        )
        return {cache_key(self.config, request, structured_mode=m) for m in self.modes}

    def check(self, row: dict[str, Any], variables: dict[str, Any]) -> str | None:
        """None when the key is reproduced; else what differs, as far as can be told."""
        try:
            keys = self.keys(variables)
        except AssayError as exc:
            return f"not reproduced: the prompt does not render the row ({exc})"
        if row["request_key"] in keys:
            return None
        return f"not reproduced; likeliest cause: {self._cause(row)}"

    def _cause(self, row: dict[str, Any]) -> str:
        """The first part of the request the record itself lets us compare."""
        if row.get("prompt_sha256") not in (None, self.prompt.sha256):
            return f"prompt_sha256 {row['prompt_sha256'][:12]} is not the judge's prompt"
        if row.get("model") not in (None, self.config.model):
            return f"model {row['model']!r} is not the judge's {self.config.model!r}"
        return "messages (the record's variables or prompt bytes), decoding or client settings"


def _prompt(run_dir: Path, identity: dict[str, Any]) -> Prompt | str:
    """The prompt from the bytes the run recorded, or why it cannot be had."""
    path, kind = prompt_source(run_dir, identity)
    if path is None or not path.is_file():
        return f"prompt {identity.get('id')}@{identity.get('version')}: no snapshot or file here"
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    if sha != identity.get("sha256"):
        if sha == identity.get("file_sha256"):
            return "a prompt given a Python output model: its schema is not in the run directory"
        return f"prompt {identity.get('id')}@{identity.get('version')} changed (see prompts)"
    try:
        return load_prompt_file(path, builtin=kind == "built-in")
    except AssayError as exc:
        return f"prompt {path} does not load: {exc}"


def _client(entry: dict[str, Any]) -> tuple[ModelConfig, list[str]] | str:
    """The client's config as described in the manifest, and the structured-output modes
    it can have sent ('auto' resolves by the installed litellm: both are tried)."""
    client = entry.get("client")
    if not isinstance(client, dict) or client.get("kind") != "hosted":
        return "not a hosted model client: its transport keys requests its own way"
    fields = {k: v for k, v in client.items() if k in ModelConfig.model_fields}
    try:
        config = ModelConfig.model_validate(fields)
    except (ValidationError, AssayError) as exc:
        return f"the manifest's client does not load: {str(exc).splitlines()[0]}"
    mode = config.structured_output
    return config, ["json_schema", "off"] if mode == "auto" else [mode]


# judges, the decomposer, and verifiers whose passages are in the dataset (a retrieval
# verifier's come from a corpus search: not re-run here)
RENDERED_KINDS = ("llm", "llm-decomposer", "llm-internal", "llm-context")


def _entry(manifest: Manifest, component: str) -> dict[str, Any] | None:
    entries = list(manifest.judges)
    if manifest.factuality is not None:
        entries += [manifest.factuality.decomposer, *manifest.factuality.verifiers]
    return next((e for e in entries if isinstance(e, dict) and e.get("id") == component), None)


def renderer_for(run_dir: Path, manifest: Manifest, component: str) -> Renderer | str:
    """A judge's or decomposer's renderer, or why its records cannot be re-rendered."""
    entry = _entry(manifest, component)
    if entry is None:
        return f"{component} is not in the manifest"
    identity = entry.get("prompt")
    if entry.get("kind") not in RENDERED_KINDS or not isinstance(identity, dict):
        return f"{component} ({entry.get('kind')}): its requests are not re-rendered"
    prompt = _prompt(run_dir, identity)
    client = _client(entry)
    if isinstance(prompt, str) or isinstance(client, str):
        return prompt if isinstance(prompt, str) else str(client)
    return Renderer(prompt, client[0], client[1], entry)


class DatasetRows:
    """A dataset's rows by id, read from bytes whose sha256 is the recorded one."""

    def __init__(self, run_dir: Path, manifest: Manifest, name: str, kind: str) -> None:
        self.kind = kind
        self.by_id: dict[str, Any] = {}
        self.reason = self._load(run_dir, manifest, name)

    def _load(self, run_dir: Path, manifest: Manifest, name: str) -> str | None:
        info = dataset_info(manifest, name)
        if info is None or not info.sha256:
            return f"dataset {name}: no sha256 in the manifest"
        good = [p for p, _ in dataset_files(run_dir, info) if p.is_file()]
        good = [p for p in good if file_sha256(p) == info.sha256]
        if not good:
            return f"dataset {name}: no copy with the recorded sha256 here (see datasets)"
        try:
            if self.kind == "items":
                options = items_options(manifest, info).model_copy(update={"path": str(good[0])})
                self.by_id = {item.id: item for item in load_items(options).items}
            elif self.kind == "answers":
                fmt, evidence = answers_options(manifest, info)
                answers = load_answers(str(good[0]), format=fmt, name=name, evidence_file=evidence)
                self.by_id = {item.id: item for item in answers.items}
            else:
                delimiter = getattr(info, "delimiter", None)
                data = load_pairs(str(good[0]), name=name, delimiter=delimiter)
                self.by_id = {pair.id: pair for pair in data.pairs}
        except AssayError as exc:
            return f"dataset {name}: does not load as the run read it ({exc})"
        return None

    def variables(self, row: dict[str, Any], kind: str) -> dict[str, Any] | str:
        """The template variables of the row's record (sent by a component of `kind`),
        or a skip reason."""
        if self.reason is not None:
            return self.reason
        if kind in ("llm-internal", "llm-context"):
            return self._claim(row, with_passages=kind == "llm-context")
        if self.kind == "items":
            item = self.by_id.get(str(row.get("item_id")))
            if item is None:
                return f"item {row.get('item_id')} is not in its dataset"
            values = dict(item.variables)
            if row.get("order") == "ba":
                values["response_a"], values["response_b"] = item.response_b, item.response_a
            return values
        if self.kind == "answers":
            return self._sentence(row)
        pair = self.by_id.get(str(row.get("pair_id")))
        if pair is None:
            return f"pair {row.get('pair_id')} is not in its dataset"
        member = Member(str(row.get("member")))
        return {"claim": pair.claim(member), "evidence": pair.evidence, "question": pair.question}

    def _sentence(self, row: dict[str, Any]) -> dict[str, Any] | str:
        """A decomposer's variables: the answer split as the run split it, the sentence
        by its id, the answer and its question."""
        from assay.decomposers import split_sentences

        item = self.by_id.get(str(row.get("answer_id")))
        if item is None:
            return f"answer {row.get('answer_id')} is not in its dataset"
        sentences = {s.id: s.text for s in split_sentences(item.answer)}
        index = row.get("sentence_id")
        sentence = sentences.get(index) if isinstance(index, int) else None
        if sentence is None:
            return f"answer {item.id} has no sentence {row.get('sentence_id')}"
        return {"sentence": sentence, "answer": item.answer, "question": item.question}

    def _claim(self, row: dict[str, Any], *, with_passages: bool) -> dict[str, Any] | str:
        """A verifier's variables: the claim, its answer's question, and (a context
        verifier) the claim's own gold evidence or else the answer's, as the run gave them."""
        item = self.by_id.get(str(row.get("answer_id")))
        if item is None:
            return f"answer {row.get('answer_id')} is not in its dataset"
        values: dict[str, Any] = {"claim": row.get("claim"), "question": item.question}
        if with_passages:
            gold = {c.id: c.evidence for c in item.gold_claims or []}
            evidence = gold.get(row.get("claim_id")) or item.evidence
            values["passages"] = [p.model_dump() for p in evidence]
        return values
