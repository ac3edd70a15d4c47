"""What `assay list` shows: judges, baselines, decomposers, verifiers, prompts and
importers, read from the registries the runner uses, so the list cannot drift from
what a spec accepts."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

SECTIONS = ("judges", "baselines", "decomposers", "verifiers", "prompts", "importers")


class Section(BaseModel):
    name: str
    headers: list[str]
    rows: list[list[str]]


DECOMPOSER_INFO = {
    "sentence": ("no model", "each sentence of an answer is one claim (rule-based)"),
    "llm": ("model, prompt (default decompose-conditional@1)", "an LLM splits each sentence"),
    "given": ("claims in the data", "uses the dataset's own claims (e.g. ExpertQA)"),
}
VERIFIER_INFO = {
    "internal": ("model", "the model's own knowledge; no evidence passed"),
    "context": ("model", "the evidence passages the dataset provides"),
    "retrieval": ("model, corpus (passages JSONL)", "BM25 (+ dense_model) over a corpus"),
    "nli": ("model", "an NLI prompt over the provided evidence"),
    "nli-local": ("model = hf-nli/<dir>", "a local NLI classifier (transformers), no API"),
    "overlap": ("nothing", "token overlap with the evidence (baseline, no model)"),
}
ANSWER_FORMATS = {  # format: (what is read, what it holds)
    "auto": ("a file or folder", "picked from the folder's files or the first row's fields"),
    "jsonl": (".jsonl", "one answer per row (answer/response/output, question, evidence)"),
    "medscore-input": (".jsonl", "MedScore's input rows; the doctor's answer is the evidence"),
    "expertqa": ("folder or answers.jsonl", "answers with claims, evidence, expert labels"),
    "wice": ("folder or rows.jsonl", "WiCE oracle rows: one item per claim, chunks as passages"),
}


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def judges() -> Section:
    """Judge kinds a spec can name: LLM judges and every baseline."""
    from assay.judges import BASELINES

    rows = [["llm", "[[judges]] models × prompts", "a model id (and its key)"]]
    rows += [[f"baseline:{n}", f'[[baselines]] name = "{n}"', "nothing"] for n in BASELINES]
    return Section(name="judges", headers=["judge", "in a spec", "needs"], rows=rows)


def baselines() -> Section:
    from assay.judges import BASELINES

    rows = []
    for name, cls in BASELINES.items():
        params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        rows.append([name, cls.version, ", ".join(params), _first_line(cls)])
    headers = ["baseline", "version", "params", "description"]
    return Section(name="baselines", headers=headers, rows=rows)


def decomposers() -> Section:
    from assay.runs._spec import DECOMPOSER_KINDS

    rows = [[k, *DECOMPOSER_INFO[k]] for k in DECOMPOSER_KINDS]
    return Section(name="decomposers", headers=["kind", "needs", "what it does"], rows=rows)


def verifiers() -> Section:
    from assay.runs._factuality import DEFAULT_PROMPTS
    from assay.runs._spec import VERIFIER_KINDS

    rows = [
        [k, VERIFIER_INFO[k][0], DEFAULT_PROMPTS.get(k, "—"), VERIFIER_INFO[k][1]]
        for k in VERIFIER_KINDS
    ]
    headers = ["kind", "needs", "default prompt", "checks against"]
    return Section(name="verifiers", headers=headers, rows=rows)


def prompts(prompt_dirs: list[Any] | None = None) -> Section:
    from assay.prompts import PromptRegistry

    rows = [
        [p.ref, p.meta.task, p.sha256[:12], "built-in" if p.builtin else str(p.path)]
        for p in PromptRegistry(prompt_dirs or [])
    ]
    return Section(name="prompts", headers=["prompt", "task", "sha256", "source"], rows=rows)


def importers() -> Section:
    """Data assay reads: ForceBench pairs, answers to score, MedScore's outputs."""
    from assay.datasets._importers import (
        FORMATS,
        MEDSCORE_DECOMPOSITIONS,
        MEDSCORE_OUTPUTS,
        MEDSCORE_VERIFICATIONS,
    )
    from assay.datasets._load import BUILTIN_DATASETS, CSV_SUFFIXES, JSONL_SUFFIXES

    suffixes = ", ".join(JSONL_SUFFIXES + CSV_SUFFIXES)
    rows = [["forcebench", suffixes, "[[datasets]] path", "ForceBench claim pairs"]]
    rows += [
        [f"answers:{f}", ANSWER_FORMATS[f][0], f'[factuality] datasets format = "{f}"']
        + [ANSWER_FORMATS[f][1]]
        for f in FORMATS
    ]
    files = ", ".join((MEDSCORE_DECOMPOSITIONS, MEDSCORE_VERIFICATIONS, *MEDSCORE_OUTPUTS))
    rows.append(["medscore-outputs", files, "assay import-medscore DIR", "a scored run"])
    rows += [
        [f"builtin:{name}", file, "path = " + f'"builtin:{name}"', "bundled demo data"]
        for name, file in BUILTIN_DATASETS.items()
    ]
    headers = ["importer", "files", "used by", "what"]
    return Section(name="importers", headers=headers, rows=rows)


BUILDERS: dict[str, Callable[[], Section]] = {
    "judges": judges,
    "baselines": baselines,
    "decomposers": decomposers,
    "verifiers": verifiers,
    "prompts": prompts,
    "importers": importers,
}


def catalog(section: str | None = None) -> list[Section]:
    """One section, or all of them in SECTIONS order."""
    from assay.errors import AssayError

    if section is not None and section not in BUILDERS:
        raise AssayError(f"unknown section {section!r}; use one of: {', '.join(SECTIONS)}")
    return [BUILDERS[name]() for name in ([section] if section else SECTIONS)]


def print_catalog(section: str | None = None) -> None:
    from assay._table import print_table

    for i, part in enumerate(catalog(section)):
        if i:
            print()
        print_table(part.headers, part.rows, title=part.name)
