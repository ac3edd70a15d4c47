"""A local transformers NLI model as a verifier (`hf-nli/<dir or hub id>`).

Premise = an evidence passage (split into overlapping chunks that fit the model),
hypothesis = the claim. Batches are length-bucketed and dynamically padded, which is
where CPU throughput comes from. torch/transformers are imported only on first use.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.outcomes import Status, Usage
from assay.core.verification import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel
from assay.errors import ModelConfigError
from assay.models._local import (
    SerialGate,
    check_architecture,
    check_dtype,
    library_versions,
    load_pretrained,
    load_tokenizer,
    model_fingerprint,
    pick_device,
    resolve_model_dir,
)

ROLES = ("entailment", "neutral", "contradiction")
PROVIDER = "hf-nli"
NO_EVIDENCE = "no evidence provided"
_HUGE = 1_000_000  # transformers' "no limit" model_max_length is ~1e30


def role_of_label(name: str) -> str | None:
    """entailment / neutral / contradiction from a label name, case- and punctuation-
    insensitive ('ENTAILMENT', 'entails', 'Contradiction', 'neutral'). A two-class
    model's 'not_entailment' plays the neutral role. Anything else: None."""
    n = re.sub(r"[^a-z]", "", name.lower())
    if n.startswith(("notentail", "nonentail")):
        return "neutral"
    if n.startswith("entail"):
        return "entailment"
    if n.startswith("contradict") or n == "contra":
        return "contradiction"
    if n.startswith("neutral"):
        return "neutral"
    return None


def resolve_label_roles(
    id2label: Mapping[int, str], label_map: Mapping[str, int] | None, *, model_id: str
) -> dict[str, int]:
    """Which output index is entailment, neutral, contradiction.

    An explicit `label_map` wins; otherwise every label in the model's config must name a
    distinct role. Entailment is required; contradiction and neutral are optional (a
    model without a contradiction class never yields `contradicted`).
    """
    found = {int(k): str(v) for k, v in id2label.items()}
    shown = ", ".join(f"{i}: {found[i]!r}" for i in sorted(found))
    if label_map is not None:
        roles = dict(label_map)
        bad = sorted(set(roles) - set(ROLES))
        if bad:
            raise ModelConfigError(
                f"model {model_id!r}: label_map keys must be {', '.join(ROLES)}; got {bad}"
            )
        if any(not isinstance(i, int) or i not in found for i in roles.values()):
            raise ModelConfigError(
                f"model {model_id!r}: label_map indices must be among the model's labels "
                f"({shown}); got {roles}"
            )
        if len(set(roles.values())) != len(roles):
            raise ModelConfigError(f"model {model_id!r}: label_map maps two roles to one index")
    else:
        roles = {}
        for index in sorted(found):
            role = role_of_label(found[index])
            if role is None or role in roles:
                roles = {}
                break
            roles[role] = index
        if not roles:
            raise ModelConfigError(
                f"model {model_id!r}: cannot tell entailment/neutral/contradiction from the "
                f"model's labels ({shown}); pass label_map, e.g. "
                "{'entailment': 0, 'neutral': 1, 'contradiction': 2}"
            )
    if "entailment" not in roles:
        raise ModelConfigError(
            f"model {model_id!r}: no entailment label among the model's labels ({shown})"
        )
    return roles


@dataclass(frozen=True)
class EvidenceChunk:
    """A window of one passage: what the model reads as the premise."""

    passage_id: str
    span: tuple[int, int]  # characters of passage.text
    tokens: tuple[int, int]  # tokens of the passage, without special tokens
    text: str


def token_windows(word_ids: Sequence[int | None], size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of at most `size` tokens covering all tokens, consecutive ones sharing
    about `overlap` tokens; boundaries fall between words unless a word alone is longer
    than a window."""
    n = len(word_ids)
    if n == 0:
        return []

    def continues(i: int) -> bool:  # token i is inside the word of token i - 1
        return word_ids[i] is not None and word_ids[i] == word_ids[i - 1]

    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, n)
        if end < n:
            b = end
            while b > start + 1 and continues(b):
                b -= 1
            if not continues(b):
                end = b
        out.append((start, end))
        if end >= n:
            return out
        nxt = max(end - overlap, start + 1)
        b = nxt
        while b > start + 1 and continues(b):
            b -= 1
        start = nxt if continues(b) else b


@dataclass
class _Plan:
    """One claim's share of a batch: its chunks and their rows in the pair list."""

    chunks: list[EvidenceChunk]
    rows: list[int]


class LocalNLIVerifier:
    """Labels claims with a local NLI (sequence-classification) model.

    Verdict rules, per claim over all chunks of all its passages: `score` = the highest
    entailment probability; `supported` when that exceeds `threshold`; otherwise
    `contradicted` when some chunk's most likely class is contradiction with probability
    above `threshold`; otherwise `unsupported`. A claim with no evidence text is
    `unsupported` with score 0 and error "no evidence provided" (status ok: nothing
    failed, there is just nothing to support it).
    """

    version = "1"

    def __init__(
        self,
        model: str,
        *,
        label_map: Mapping[str, int] | None = None,
        threshold: float = 0.8,
        max_length: int = 512,
        chunk_tokens: int | None = None,
        chunk_stride: int = 128,
        batch_size: int = 32,
        length_bucketing: bool = True,
        device: str = "cpu",
        dtype: str | None = None,
        name: str | None = None,
    ) -> None:
        path = model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model
        if not path:
            raise ModelConfigError(f"model {model!r}: expected hf-nli/<directory or hub id>")
        self.model = f"{PROVIDER}/{path}"
        self.path = path
        if not 0.0 <= threshold < 1.0:
            raise ModelConfigError(f"model {self.model!r}: threshold must be in [0, 1)")
        if max_length < 16:
            raise ModelConfigError(f"model {self.model!r}: max_length must be at least 16")
        if chunk_tokens is not None and chunk_tokens < 8:
            raise ModelConfigError(f"model {self.model!r}: chunk_tokens must be at least 8")
        if chunk_stride < 0 or batch_size < 1:
            raise ModelConfigError(
                f"model {self.model!r}: chunk_stride must be >= 0 and batch_size >= 1"
            )
        self.label_map = dict(label_map) if label_map is not None else None
        self.threshold = threshold
        self.max_length = max_length
        self.chunk_tokens = chunk_tokens
        self.chunk_stride = chunk_stride
        self.batch_size = batch_size
        self.length_bucketing = length_bucketing
        self.device_option = device
        self.dtype = check_dtype(dtype, model_id=self.model)
        self._id = name or self.model
        self.stats = {"pairs": 0, "batches": 0, "tokens": 0, "padded_tokens": 0}
        self._gate = SerialGate()
        self._load_lock = threading.Lock()
        self._directory: Path | None = None
        self._fingerprint: str | None = None
        self._tokenizer: Any = None
        self._id2label: dict[int, str] = {}
        self._roles: dict[str, int] = {}
        self._limit = max_length
        self._model: Any = None
        self._device: str | None = None

    @property
    def id(self) -> str:
        return self._id

    # ---- loading -------------------------------------------------------------------
    def _ensure_tokenizer(self) -> None:
        """Config, labels and tokenizer: cheap, and enough to describe and chunk."""
        with self._load_lock:
            if self._tokenizer is not None:
                return
            directory = resolve_model_dir(self.path, model_id=self.model)
            config = check_architecture("sequence-classification", directory, model_id=self.model)
            id2label = {int(k): str(v) for k, v in (config.id2label or {}).items()}
            roles = resolve_label_roles(id2label, self.label_map, model_id=self.model)
            tokenizer = load_tokenizer(directory, model_id=self.model)
            if not getattr(tokenizer, "is_fast", False):
                raise ModelConfigError(
                    f"model {self.model!r}: needs a fast (tokenizers) tokenizer for offsets"
                )
            if tokenizer.pad_token_id is None:
                raise ModelConfigError(
                    f"model {self.model!r}: the tokenizer has no pad token; batching needs one"
                )
            limit = self.max_length
            for cap in (
                getattr(tokenizer, "model_max_length", None),
                getattr(config, "max_position_embeddings", None),
            ):
                if isinstance(cap, int) and 0 < cap < _HUGE:
                    limit = min(limit, cap)
            self._directory, self._id2label, self._roles = directory, id2label, roles
            self._limit, self._tokenizer = limit, tokenizer

    def _ensure_model(self) -> None:
        self._ensure_tokenizer()
        with self._load_lock:
            if self._model is not None:
                return
            assert self._directory is not None
            device = pick_device(self.device_option, model_id=self.model)
            self._model = load_pretrained(
                "sequence-classification",
                self._directory,
                model_id=self.model,
                device=device,
                dtype=self.dtype,
            )
            self._device = device

    def preflight(self) -> None:
        """Load now, so a bad path, model or label set fails before the first claim."""
        self._ensure_model()

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(resolve_model_dir(self.path, model_id=self.model))
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        """Everything that decides a verdict, for the run manifest. Never raises: a model
        that cannot be read shows as null fields (and fails in preflight)."""
        try:
            self._ensure_tokenizer()
            fingerprint: str | None = self.fingerprint()
            labels: dict[str, Any] | None = {
                role: {"index": i, "name": self._id2label.get(i)} for role, i in self._roles.items()
            }
        except ModelConfigError:
            fingerprint, labels = None, None
        return {
            "kind": "nli-local",
            "id": self.id,
            "version": self.version,
            "model": self.model,
            "path": self.path,
            "resolved_path": str(self._directory) if self._directory else None,
            "fingerprint": fingerprint,
            "labels": labels,
            "label_source": "label_map" if self.label_map is not None else "config",
            "threshold": self.threshold,
            "aggregation": "max entailment over chunks",
            "max_length": self.max_length,
            "effective_max_length": self._limit,
            "chunk_tokens": self.chunk_tokens,
            "chunk_stride": self.chunk_stride,
            "batch_size": self.batch_size,
            "length_bucketing": self.length_bucketing,
            "device": self._device or self.device_option,
            "dtype": self.dtype,
            "parser_version": None,
            "versions": library_versions(),
        }

    # ---- chunking --------------------------------------------------------------------
    def _chunk_size(self, claim_tokens: int) -> int:
        specials = int(self._tokenizer.num_special_tokens_to_add(pair=True))
        budget = self._limit - specials - claim_tokens
        return max(1, min(self.chunk_tokens or budget, budget))

    def _claim_fits(self, claim_tokens: int) -> bool:
        return claim_tokens <= self._limit // 2

    def _chunk_passages(
        self,
        item: ClaimToVerify,
        size: int,
        encoded: Mapping[str, tuple[list[tuple[int, int]], list[int | None]]],
    ) -> list[EvidenceChunk]:
        overlap = min(self.chunk_stride, size // 2)
        chunks: list[EvidenceChunk] = []
        for passage in item.evidence:
            offsets, word_ids = encoded[passage.text]
            for s, e in token_windows(word_ids, size, overlap):
                span = (offsets[s][0], offsets[e - 1][1])
                chunks.append(
                    EvidenceChunk(passage.id, span, (s, e), passage.text[span[0] : span[1]])
                )
        return chunks

    def _encode_passages(
        self, texts: Sequence[str]
    ) -> dict[str, tuple[list[tuple[int, int]], list[int | None]]]:
        unique = list(dict.fromkeys(texts))
        if not unique:
            return {}
        enc = self._tokenizer(unique, add_special_tokens=False, return_offsets_mapping=True)
        return {
            text: ([(int(a), int(b)) for a, b in enc["offset_mapping"][i]], enc.word_ids(i))
            for i, text in enumerate(unique)
        }

    def chunks(self, item: ClaimToVerify) -> list[EvidenceChunk]:
        """The premise windows this claim is checked against (for inspection)."""
        self._ensure_tokenizer()
        claim_tokens = len(self._tokenizer(item.claim, add_special_tokens=False)["input_ids"])
        encoded = self._encode_passages([p.text for p in item.evidence])
        return self._chunk_passages(item, self._chunk_size(claim_tokens), encoded)

    # ---- inference -------------------------------------------------------------------
    def _probabilities(
        self, pairs: Sequence[tuple[str, str]], batch_size: int
    ) -> tuple[list[list[float]], list[int]]:
        """Softmax over the model's classes for each (premise, hypothesis), in input order,
        and each pair's length in tokens.

        Pairs are sorted by token length (when bucketing) so each batch is padded only to
        its own longest member; results are put back in the caller's order.
        """
        import torch

        if not pairs:
            return [], []
        tok, model = self._tokenizer, self._model
        enc = tok(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            truncation="longest_first",
            max_length=self._limit,
        )
        fields = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
        lengths = [len(ids) for ids in enc["input_ids"]]
        order = list(range(len(pairs)))
        if self.length_bucketing:
            order.sort(key=lambda i: lengths[i])
        pad_left = getattr(tok, "padding_side", "right") == "left"
        fill = {"input_ids": int(tok.pad_token_id), "token_type_ids": 0, "attention_mask": 0}
        out: list[list[float]] = [[] for _ in pairs]
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                width = max(lengths[i] for i in rows)
                tensors = {}
                for name in fields:
                    t = torch.full((len(rows), width), fill[name], dtype=torch.long)
                    for r, i in enumerate(rows):
                        values = torch.tensor(enc[name][i], dtype=torch.long)
                        if pad_left:
                            t[r, width - lengths[i] :] = values
                        else:
                            t[r, : lengths[i]] = values
                    tensors[name] = t.to(self._device)
                logits = model(**tensors).logits.float()
                probs = torch.softmax(logits, dim=-1).cpu().tolist()
                for r, i in enumerate(rows):
                    out[i] = probs[r]
                self.stats["batches"] += 1
                self.stats["padded_tokens"] += width * len(rows)
        self.stats["pairs"] += len(pairs)
        self.stats["tokens"] += sum(lengths)
        return out, lengths

    def pair_probabilities(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[dict[str, float]]:
        """Role -> probability for each (premise, hypothesis), in order (blocking).

        Pairs longer than the model's limit are truncated, longest sequence first.
        """
        self._ensure_model()
        rows, _ = self._gate.call(self._probabilities, pairs, batch_size or self.batch_size)
        return [{role: row[i] for role, i in self._roles.items()} for row in rows]

    def _verdict(self, plan: _Plan, probs: list[list[float]], tokens: int) -> Verdict:
        e_idx = self._roles["entailment"]
        c_idx = self._roles.get("contradiction")
        scored = [(chunk, probs[row]) for chunk, row in zip(plan.chunks, plan.rows, strict=True)]
        best_chunk, best = max(scored, key=lambda cp: cp[1][e_idx])
        p_entail = min(1.0, max(0.0, best[e_idx]))
        p_contra: float | None = None
        contra: tuple[EvidenceChunk, float] | None = None
        if c_idx is not None:
            p_contra = max(p[c_idx] for _, p in scored)
            for chunk, p in scored:
                top = max(range(len(p)), key=p.__getitem__)
                wins = top == c_idx and p[c_idx] > self.threshold
                if wins and (contra is None or p[c_idx] > contra[1]):
                    contra = (chunk, p[c_idx])
        if p_entail > self.threshold:
            label, used = VerdictLabel.SUPPORTED, (best_chunk, p_entail)
        elif contra is not None:
            label, used = VerdictLabel.CONTRADICTED, contra
        else:
            label, used = VerdictLabel.UNSUPPORTED, (best_chunk, p_entail)
        chunk, chunk_score = used
        return Verdict(
            status=Status.OK,
            label=label,
            score=p_entail,
            evidence=[
                EvidenceUse(
                    passage_id=chunk.passage_id,
                    span=chunk.span,
                    score=min(1.0, max(0.0, chunk_score)),
                )
            ],
            parsed={
                "p_entailment": p_entail,
                "p_contradiction": p_contra,
                "chunks": len(plan.chunks),
                "best_chunk_probs": {role: best[i] for role, i in self._roles.items()},
            },
            usage=Usage(prompt_tokens=tokens, total_tokens=tokens),
            attempts=1,
        )

    def _verify_sync(self, items: Sequence[ClaimToVerify]) -> list[Verdict]:
        self._ensure_model()
        claims = self._tokenizer([i.claim for i in items], add_special_tokens=False)
        claim_lengths = [len(ids) for ids in claims["input_ids"]]
        encoded = self._encode_passages([p.text for i in items for p in i.evidence])
        results: list[Verdict | _Plan] = []
        pairs: list[tuple[str, str]] = []
        row_of: dict[tuple[str, str], int] = {}
        for item, n_claim in zip(items, claim_lengths, strict=True):
            if not any(p.text.strip() for p in item.evidence):
                results.append(
                    Verdict(
                        status=Status.OK,
                        label=VerdictLabel.UNSUPPORTED,
                        score=0.0,
                        error=NO_EVIDENCE,
                        attempts=1,
                    )
                )
                continue
            if not self._claim_fits(n_claim):
                results.append(
                    Verdict(
                        status=Status.TRUNCATED,
                        error=f"claim has {n_claim} tokens; at most {self._limit // 2} fit "
                        f"(half of max_length {self._limit})",
                        attempts=1,
                    )
                )
                continue
            chunks = self._chunk_passages(item, self._chunk_size(n_claim), encoded)
            rows = []
            for chunk in chunks:
                key = (chunk.text, item.claim)
                if key not in row_of:  # identical pairs are scored once
                    row_of[key] = len(pairs)
                    pairs.append(key)
                rows.append(row_of[key])
            results.append(_Plan(chunks, rows))
        probs, lengths = self._probabilities(pairs, self.batch_size)
        return [
            r
            if isinstance(r, Verdict)
            else self._verdict(r, probs, sum(lengths[i] for i in r.rows))
            for r in results
        ]

    async def verify_many(self, items: list[ClaimToVerify]) -> list[Verdict]:
        """Verdicts for many claims in input order, all pairs batched together.

        Each verdict's latency_s is the whole call's wall time (they share batches).
        A failure during inference yields api_error verdicts; a model that cannot be
        loaded raises ModelConfigError.
        """
        if not items:
            return []
        started = time.perf_counter()
        try:
            verdicts = await self._gate.run(self._verify_sync, items)
        except ModelConfigError:
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            verdicts = [Verdict(status=Status.API_ERROR, error=error, attempts=1) for _ in items]
        elapsed = time.perf_counter() - started
        for v in verdicts:
            v.latency_s = elapsed
        return verdicts

    async def verify(self, item: ClaimToVerify) -> Verdict:
        return (await self.verify_many([item]))[0]
