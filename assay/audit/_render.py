"""A recorded request rendered again: the component's prompt (from the bytes the run
recorded, with its output schema from `snapshot/schemas/` when a Python model gave
it), its decoding and client from the manifest, the variables from the dataset row (a
retrieval verifier's passages from its corpus searched again), then the cache key, as
`LLMJudge.request_for_variables`, `LLMVerifier.request_for` and `Model.complete` make it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.audit._inputs import prompt_source
from assay.audit._retrieval import Refusal, Retrieval, retrieval_for
from assay.audit._rows import CLAIM_KINDS
from assay.core.manifest import Manifest
from assay.errors import AssayError
from assay.models import Decoding, ModelConfig, cache_key
from assay.models._local_causal import local_cache_key
from assay.models._types import ChatRequest
from assay.prompts import Prompt, load_prompt_file
from assay.runs.store._schemas import SCHEMA_KEY, schema_path

# what an LLM verifier records, with no request sent, when it has no passage to show
NO_PASSAGES = "no evidence passages"


@dataclass(frozen=True)
class Client:
    """A client as the manifest describes it: the keys a request can have been sent
    under ('auto' structured output resolves by the installed litellm: both modes are
    tried); a local model's key also joins its recorded weights fingerprint."""

    config: ModelConfig
    modes: tuple[str, ...]
    fingerprint: str | None = None

    def keys(self, request: ChatRequest) -> set[str]:
        if self.fingerprint is not None:
            return {local_cache_key(self.config, request, self.fingerprint)}
        return {cache_key(self.config, request, structured_mode=m) for m in self.modes}


@dataclass(frozen=True)
class Schema:
    """The output schema a judge sends and the name it sends it under."""

    schema: dict[str, Any] | None
    name: str


class Renderer:
    """One component's request, rendered for any variables, and its cache key checked."""

    def __init__(
        self,
        prompt: Prompt,
        client: Client,
        entry: dict[str, Any],
        schema: Schema,
        retrieval: Retrieval | None = None,
    ) -> None:
        self.prompt, self.client, self.schema, self.retrieval = prompt, client, schema, retrieval
        self.kind = str(entry.get("kind"))
        self.prompt_sha = str((entry.get("prompt") or {}).get("sha256"))
        self.decoding = Decoding.model_validate(entry.get("decoding") or {})
        self.sample_index = int(entry.get("sample_index") or 0)

    def keys(self, variables: dict[str, Any]) -> set[str]:
        request = ChatRequest.model_construct(
            messages=self.prompt.render(variables),
            decoding=self.decoding,
            response_schema=self.schema.schema,
            output_model=None,  # not part of the key
            schema_name=self.schema.name,
            sample_index=self.sample_index,
        )
        return self.client.keys(request)

    def check(self, row: dict[str, Any], variables: dict[str, Any]) -> str | None:
        """None when the record is reproduced; else what differs, as far as can be told."""
        if self.retrieval is not None:
            found = self.retrieval.reproduce(row)
            if isinstance(found, str):
                return found
            variables = {**variables, "passages": [p.model_dump() for p in found]}
        shown = variables.get("passages") if self.kind in CLAIM_KINDS else None
        if not row.get("request_key"):  # a verifier with no passage to show sent nothing
            return None if not shown else f"{NO_PASSAGES!r}, yet {len(shown)} to show now"
        if shown == []:
            return "a request recorded, but the claim has no passage to show"
        try:
            keys = self.keys(variables)
        except AssayError as exc:
            return f"not reproduced: the prompt does not render the row ({exc})"
        if row["request_key"] in keys:
            return None
        return f"not reproduced; likeliest cause: {self._cause(row)}"

    def _cause(self, row: dict[str, Any]) -> str:
        """The first part of the request the record itself lets us compare."""
        if row.get("prompt_sha256") not in (None, self.prompt_sha):
            return f"prompt_sha256 {row['prompt_sha256'][:12]} is not the judge's prompt"
        if row.get("model") not in (None, self.client.config.model):
            return f"model {row['model']!r} is not the judge's {self.client.config.model!r}"
        return "messages (the record's variables or prompt bytes), decoding or client settings"


def _derived(file_sha: str, identity: dict[str, Any]) -> bool:
    """Whether the recorded hash is the file's joined with its output schema's (a
    prompt given a Python output model, `Prompt.with_output_model`)."""
    schema = identity.get("output_schema_sha256")
    joined = hashlib.sha256(f"{file_sha}+{schema}".encode()).hexdigest()
    return isinstance(schema, str) and identity.get("sha256") == joined


def _schema_snapshot(run_dir: Path, identity: dict[str, Any]) -> Schema | Refusal:
    """The output schema kept in the run directory, checked by its recorded hash."""
    ref = f"prompt {identity.get('id')}@{identity.get('version')}"
    sha = str(identity["output_schema_sha256"])
    rel = identity.get(SCHEMA_KEY) or schema_path(sha)
    path = run_dir / str(rel)
    if not path.is_file():
        return Refusal(f"{ref} answers in a Python output model whose schema {rel} is not here")
    data = path.read_bytes()
    now = hashlib.sha256(data).hexdigest()
    if now != sha:
        return Refusal(
            f"{rel}: sha256 {now[:12]} is not the output_schema_sha256 {sha[:12]} {ref} recorded",
            fails=True,
        )
    schema = json.loads(data).get("schema")
    return Schema(schema if isinstance(schema, dict) else None, str(identity.get("output_schema")))


def _prompt(run_dir: Path, identity: dict[str, Any]) -> tuple[Prompt, Schema] | Refusal:
    """The prompt from the bytes the run recorded and the schema it answers in, or why
    they cannot be had."""
    ref = f"prompt {identity.get('id')}@{identity.get('version')}"
    path, kind = prompt_source(run_dir, identity)
    if path is None or not path.is_file():
        return Refusal(f"{ref}: no snapshot or file here")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    derived = sha != identity.get("sha256") and _derived(sha, identity)
    if sha != identity.get("sha256") and not derived:
        return Refusal(f"{ref} changed (see prompts)")
    try:
        prompt = load_prompt_file(path, builtin=kind == "built-in")
    except AssayError as exc:
        return Refusal(f"prompt {path} does not load: {exc}")
    if derived:
        schema = _schema_snapshot(run_dir, identity)
        return schema if isinstance(schema, Refusal) else (prompt, schema)
    model_schema = prompt.output_model.model_json_schema()
    return prompt, Schema(model_schema, prompt.meta.output_schema)


def _config(client: dict[str, Any], **fixed: Any) -> ModelConfig | Refusal:
    fields = {k: v for k, v in client.items() if k in ModelConfig.model_fields}
    try:
        return ModelConfig.model_validate({**fields, **fixed})
    except (ValidationError, AssayError) as exc:
        return Refusal(f"the manifest's client does not load: {str(exc).splitlines()[0]}")


def _client(entry: dict[str, Any]) -> Client | Refusal:
    """The client's config as described in the manifest. A local causal model's key
    needs no weights: the hosted key joined with the fingerprint the run recorded."""
    client = entry.get("client")
    kind = client.get("kind") if isinstance(client, dict) else None
    if not isinstance(client, dict) or kind not in ("hosted", "local-causal"):
        return Refusal(f"a {kind} client: its transport keys requests its own way")
    if kind == "local-causal":
        fingerprint = client.get("fingerprint")
        if not isinstance(fingerprint, str) or not fingerprint:
            return Refusal(f"local model {client.get('model')}: no fingerprint recorded")
        config = _config(client, structured_output="off")
        return config if isinstance(config, Refusal) else Client(config, ("off",), fingerprint)
    config = _config(client)
    if isinstance(config, Refusal):
        return config
    mode = config.structured_output
    return Client(config, ("json_schema", "off") if mode == "auto" else (mode,))


# judges, the decomposer, and verifiers whose prompt shows a claim (with the dataset's
# passages, or those a corpus search finds again)
RENDERED_KINDS = ("llm", "llm-decomposer", *CLAIM_KINDS)


def _entry(manifest: Manifest, component: str) -> dict[str, Any] | None:
    entries = list(manifest.judges)
    if manifest.factuality is not None:
        entries += [manifest.factuality.decomposer, *manifest.factuality.verifiers]
    return next((e for e in entries if isinstance(e, dict) and e.get("id") == component), None)


def renderer_for(run_dir: Path, manifest: Manifest, component: str) -> Renderer | Refusal:
    """A component's renderer, or why its records cannot be re-rendered."""
    entry = _entry(manifest, component)
    if entry is None:
        return Refusal(f"{component} is not in the manifest")
    identity = entry.get("prompt")
    if entry.get("kind") not in RENDERED_KINDS or not isinstance(identity, dict):
        return Refusal(f"{component} ({entry.get('kind')}): its requests are not re-rendered")
    prompt = _prompt(run_dir, identity)
    if isinstance(prompt, Refusal):
        return prompt
    client = _client(entry)
    if isinstance(client, Refusal):
        return client
    schema = prompt[1]
    if entry.get("kind") != "llm":  # only judges send their output schema
        schema = Schema(None, schema.name)
    retrieval = None
    if entry.get("kind") == "llm-retrieval":
        found = retrieval_for(run_dir, manifest, entry)
        if isinstance(found, Refusal):
            return found
        retrieval = found
    return Renderer(prompt[0], client, entry, schema, retrieval)
