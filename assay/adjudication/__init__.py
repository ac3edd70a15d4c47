"""Human adjudication of a run's gold: a labels file beside the records, never in them.

A person (in `assay view`, or from Python) sets or corrects an item's gold label or
pairwise preference; each correction is a line appended to `RUN_DIR/labels.jsonl` with
who, when and the value it replaced. The latest line per item wins. `assay compare
--gold adjudicated` and `assay report --gold adjudicated` score judges against it, and
`assay labels export` writes it as a CSV an items dataset reads.
"""

from assay.adjudication._gold import (
    ADJUDICATED_RATER,
    GOLD_SOURCES,
    GoldOverlay,
    GoldSource,
    check_gold_source,
    gold_overlay,
)
from assay.adjudication._model import LABELS_FILE, Adjudication, AdjudicationError
from assay.adjudication._store import (
    adjudication_history,
    append_adjudication,
    iter_adjudications,
    read_adjudications,
)

__all__ = [
    "ADJUDICATED_RATER",
    "GOLD_SOURCES",
    "LABELS_FILE",
    "Adjudication",
    "AdjudicationError",
    "GoldOverlay",
    "GoldSource",
    "adjudication_history",
    "append_adjudication",
    "check_gold_source",
    "gold_overlay",
    "iter_adjudications",
    "read_adjudications",
]
