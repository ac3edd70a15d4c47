"""One item and one answer of a run, as the viewer's pages show them (pydantic models;
the server renders and escapes them).

- `item_detail(run_dir, dataset, item_id)`: an items row, a pairwise row (both orders),
  a ForceBench pair (both members) or a claim (`answer_id:claim_id`): its variables from
  the dataset file the run read, its gold and raters, the human adjudication, and every
  judgment with the messages rebuilt from the prompt file whose sha256 the record names
  (or marked: prompt changed / prompt missing / dataset changed / no prompt).
- `answers(run_dir)`, `answer_detail(run_dir, answer_id)`: a factuality run's answers,
  and one answer -> sentences -> claims -> verdicts with the evidence passages and the
  spans to highlight (character offsets), and what each applied policy did.
"""

from assay.view.detail._factuality import answer_detail, answers
from assay.view.detail._items import item_detail
from assay.view.detail._models import (
    AnswerDetail,
    AnswerSummary,
    ClaimDetail,
    EvidencePassage,
    Highlight,
    ItemDetail,
    JudgmentDetail,
    MajorityVote,
    Message,
    PolicyAnswer,
    PolicyClaim,
    SentenceDetail,
    VerdictDetail,
)
from assay.view.detail._scan import LineIndex
from assay.view.detail._sources import clear_caches

__all__ = [
    "AnswerDetail",
    "AnswerSummary",
    "ClaimDetail",
    "EvidencePassage",
    "Highlight",
    "ItemDetail",
    "JudgmentDetail",
    "LineIndex",
    "MajorityVote",
    "Message",
    "PolicyAnswer",
    "PolicyClaim",
    "SentenceDetail",
    "VerdictDetail",
    "answer_detail",
    "answers",
    "clear_caches",
    "item_detail",
]
