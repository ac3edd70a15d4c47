"""The dataset rows a recorded request was rendered from, read from bytes whose sha256
is the one the run recorded, and the template variables of each record rebuilt the way
the run built them (an items row, a ForceBench pair's member, an answer's sentence, a
claim with its evidence)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.audit._inputs import dataset_files
from assay.core.manifest import Manifest
from assay.core.pairs import Member
from assay.core.rundir import file_sha256
from assay.datasets import load_answers, load_items, load_pairs
from assay.errors import AssayError
from assay.runs.rebuild._sources import answers_options, dataset_info, items_options

# verifier kinds whose prompt shows the claim's passages from the dataset
CONTEXT_KINDS = ("llm-context", "llm-nli")
# verifier kinds rendered from a claim (a retrieval verifier's passages are added later)
CLAIM_KINDS = ("llm-internal", "llm-retrieval", *CONTEXT_KINDS)


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
                fmt, evidence = answers_options(manifest, info, run_dir)
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
        if kind in CLAIM_KINDS:
            return self._claim(row, with_passages=kind in CONTEXT_KINDS)
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
