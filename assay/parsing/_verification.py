"""From a verifier model's text to a verdict: strict by default, legacy on request.

The strict parser never reads an empty, hedged or unparsable output as `supported`: it
is a `parse_error`, excluded from scores and counted. The legacy parser reproduces the
True/False string rules of FActScore and MedScore so numbers can be compared with
published ones, quirks included (see `parse_true_false_legacy`).
"""

from __future__ import annotations

import re
import string
from typing import Literal

from assay.core.outcomes import Status
from assay.core.verification import VerdictLabel
from assay.parsing import extract_json_object
from assay.parsing._verdict import _REFUSAL_TEXT, ParsedOutcome

VERIFY_PARSER_VERSION = "assay-verify/1"
LEGACY_PARSER_VERSION = "legacy-factscore/1"  # kept for the `legacy` alias
LEGACY_PARSER_VERSIONS = {"factscore": "legacy-factscore/1", "medscore": "legacy-medscore/1"}

ParserMode = Literal["strict", "legacy", "legacy-factscore", "legacy-medscore"]
LegacyRule = Literal["factscore", "medscore"]

_ANSWER_LINE = re.compile(r"^\W*(?:final\s+)?answer\s*[:\-]?\s*\W*(true|false)\W*$", re.IGNORECASE)
_BARE_LINE = re.compile(r"^\W*(true|false)\W*$", re.IGNORECASE)
_WORD = re.compile(r"\b(true|false)\b", re.IGNORECASE)
_LEGACY_NEGATIVE = ("not", "cannot", "unknown", "information")


class ParsedVerification(ParsedOutcome):
    label: VerdictLabel | None = None


def _stop_reason(finish_reason: str | None, refusal: str | None) -> ParsedVerification | None:
    if refusal or finish_reason == "content_filter":
        return ParsedVerification(status=Status.REFUSAL, error=refusal or "content_filter")
    if finish_reason == "length":
        return ParsedVerification(status=Status.TRUNCATED, error="output hit max_tokens")
    return None


def _tf(value: bool, how: str) -> ParsedVerification:
    label = VerdictLabel.SUPPORTED if value else VerdictLabel.UNSUPPORTED
    return ParsedVerification(
        status=Status.OK,
        label=label,
        score=1.0 if value else 0.0,
        parsed={"answer": value, "rule": how},
    )


def parse_true_false(
    content: str | None, *, finish_reason: str | None = None, refusal: str | None = None
) -> ParsedVerification:
    """Strict: a JSON label, a final `Answer: True|False` line, or a lone True/False line.

    Whole words only ("untrue" is not "true"). Anything else — empty, hedged, both
    answers on the final line, prose — is a parse error.
    """
    stopped = _stop_reason(finish_reason, refusal)
    if stopped is not None:
        return stopped
    text = (content or "").strip()
    if not text:
        return ParsedVerification(status=Status.PARSE_ERROR, error="empty output")
    obj = extract_json_object(text)
    if obj is not None:
        for key in ("label", "answer", "verdict"):
            value = obj.get(key)
            if isinstance(value, bool):
                return _tf(value, f"json:{key}")
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                return _tf(value.strip().lower() == "true", f"json:{key}")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1]
    for pattern, how in ((_ANSWER_LINE, "answer-line"), (_BARE_LINE, "bare-line")):
        match = pattern.match(last)
        if match:
            return _tf(match.group(1).lower() == "true", how)
    # One single-word answer with nothing else ("True.") was handled above; a verdict
    # buried in prose is ambiguous by design.
    if _REFUSAL_TEXT.match(text.replace("\u2019", "'")):
        return ParsedVerification(status=Status.REFUSAL, error="refusal text")
    words = {m.group(1).lower() for m in _WORD.finditer(last)}
    why = (
        "both True and False on the final line"
        if len(words) == 2
        else ("no final 'Answer: True|False' line")
    )
    return ParsedVerification(status=Status.PARSE_ERROR, error=why)


def parse_true_false_legacy(
    content: str | None,
    *,
    finish_reason: str | None = None,
    refusal: str | None = None,
    rule: LegacyRule = "factscore",
) -> ParsedVerification:
    """FActScore's or MedScore's True/False string rule, for comparability only.

    Known quirks, kept on purpose:
    - substring matching: "untrue" counts as "true";
    - when both words occur, FActScore (`rule="factscore"`) compares their FIRST
      occurrences and MedScore (`rule="medscore"`) their LAST occurrences; the later
      one wins;
    - when neither occurs, the claim is supported unless the output contains one of the
      words not / cannot / unknown / information — so an EMPTY output is supported.
    Refusals and truncations are still reported as such (they never reach the rule).
    """
    stopped = _stop_reason(finish_reason, refusal)
    if stopped is not None:
        return stopped
    text = (content or "").strip().lower()
    has_true, has_false = "true" in text, "false" in text
    if has_true and not has_false:
        return _tf(True, f"{rule}:true-only")
    if has_false and not has_true:
        return _tf(False, f"{rule}:false-only")
    if has_true and has_false:
        if rule == "medscore":
            return _tf(text.rindex("true") > text.rindex("false"), "medscore:last-occurrence")
        return _tf(text.index("true") > text.index("false"), "factscore:first-occurrence")
    words = text.translate(str.maketrans("", "", string.punctuation)).split()
    return _tf(all(k not in words for k in _LEGACY_NEGATIVE), f"{rule}:no-keyword")


def parse_nli(
    content: str | None,
    *,
    finish_reason: str | None = None,
    refusal: str | None = None,
    threshold: float = 0.8,
) -> ParsedVerification:
    """NLI prompt output: supported iff entailment probability > threshold.

    A `contradiction` label is `contradicted`; anything else below the threshold is
    `unsupported`. A missing or out-of-range probability is a parse error.
    """
    stopped = _stop_reason(finish_reason, refusal)
    if stopped is not None:
        return stopped
    obj = extract_json_object(content or "")
    if obj is None:
        return ParsedVerification(status=Status.PARSE_ERROR, error="no JSON object found")
    label = str(obj.get("label", "")).strip().lower()
    if label not in ("entailment", "neutral", "contradiction"):
        return ParsedVerification(
            status=Status.PARSE_ERROR,
            parsed=obj,
            error=f"label {obj.get('label')!r} is not an NLI label",
        )
    prob = obj.get("entailment_probability", obj.get("score"))
    if isinstance(prob, bool) or not isinstance(prob, int | float) or not 0.0 <= prob <= 1.0:
        return ParsedVerification(
            status=Status.PARSE_ERROR,
            parsed=obj,
            error="entailment_probability missing or outside [0, 1]",
        )
    if prob > threshold:
        verdict = VerdictLabel.SUPPORTED
    elif label == "contradiction":
        verdict = VerdictLabel.CONTRADICTED
    else:
        verdict = VerdictLabel.UNSUPPORTED
    return ParsedVerification(status=Status.OK, label=verdict, score=float(prob), parsed=obj)
