"""Each judgment's gold, gold source, outcome and verdict: the view `v_<id>`.

Rules, the metrics' own:

- item (single response): gold is the adjudicated label if a person gave one, else
  items.jsonl's `gold_label`; the judgment is correct when its label equals the gold
  once both are normalised (`comparable_label`, as the agreement metrics compare).
- item (pairwise: so marked in items.jsonl, else judged in an order): gold is the
  adjudicated, else the dataset's, preference (A, B, tie);
  correct when the judgment's `preference` (its verdict mapped back to the dataset's
  responses, whatever the order shown) equals it.
- claim: gold is the adjudicated label, else the verification's `gold_label`; as the
  gold-agreement metrics score it, supported is the positive class and unsupported and
  contradicted the negative one: correct when verdict and gold fall on the same side.
- pair (ForceBench): there is no gold label. A pair is a monotonicity violation (MVR,
  assay.metrics._force_metrics) when s_raised >= s_cal, and a pair with a member that
  is missing, unscored or not ok counts as a violation too; both member rows of a
  judge's pair are "correct" when it is no violation (s_raised < s_cal), else "wrong".
- A judgment that did not end ok, of an item or claim with gold, is "wrong": it gave no
  answer where one was expected. Without gold: "no_gold".

`verdict` is what judges are compared by (disagreement, `differ`): the normalised label,
a pairwise item's preference; None for a judgment that did not end ok. Judgments are
compared on the same variant (pair member, pairwise order): a pair's two members differ
by design, and one judge's two orders are its consistency, not agreement.

`m_<id>` is the view materialised after each read that changed something, without the
raw outputs, with two more keys: `slot` (dataset, item, variant: what judges are
compared on) and `judged` (dataset, item, judge). Queries read it, not the view: a
filter or sort is then a scan of a small table (raw outputs are searched in `j_<id>`,
by key). `flags_sql` lists the disagreeing slots and inconsistent (item, judge) pairs
once per version, when a query first asks; `differ_sql` those of two judges.
"""

from __future__ import annotations

__all__ = ["differ_sql", "flags_sql", "materialize_sql", "view_sql"]


def view_sql(rid: str) -> str:
    """CREATE VIEW v_<rid> over the run's tables (rid: 12 hex digits)."""
    return f"""
CREATE OR REPLACE VIEW v_{rid} AS
WITH pairs AS (
  SELECT dataset, item_id, judge_id,
    count(*) = 2 AND bool_and(status = 'ok' AND score IS NOT NULL)
    AND max(score) FILTER (WHERE variant = 'raised')
        < max(score) FILTER (WHERE variant = 'calibrated') AS good
  FROM j_{rid} WHERE unit = 'pair' GROUP BY dataset, item_id, judge_id
), base AS (
  SELECT j.*, ln.norm AS label_norm, p.good,
    (j.unit = 'item' AND coalesce(it.pairwise, j.variant IS NOT NULL)) AS pairwise,
    CASE WHEN j.unit = 'claim' THEN coalesce(a.label, j.claim_gold)
         WHEN j.unit = 'item' AND coalesce(it.pairwise, j.variant IS NOT NULL)
         THEN coalesce(a.preference, it.gold_preference)
         WHEN j.unit = 'item' THEN coalesce(a.label, it.gold_label) END AS gold,
    CASE WHEN j.unit = 'pair' THEN NULL
         WHEN (CASE WHEN coalesce(it.pairwise, j.variant IS NOT NULL) THEN a.preference
               ELSE a.label END) IS NOT NULL
         THEN 'adjudicated' END AS adjudicated
  FROM j_{rid} j
  LEFT JOIN items_{rid} it
    ON j.unit = 'item' AND it.dataset = j.dataset AND it.item_id = j.item_id
  LEFT JOIN adj_{rid} a
    ON j.unit <> 'pair' AND a.dataset = j.dataset AND a.item_id = j.item_id
  LEFT JOIN labelmap ln ON ln.raw = j.label
  LEFT JOIN pairs p
    ON j.unit = 'pair' AND p.dataset = j.dataset AND p.item_id = j.item_id
    AND p.judge_id = j.judge_id
)
SELECT b.*, gn.norm AS gold_norm,
  coalesce(b.adjudicated, CASE WHEN b.gold IS NOT NULL THEN 'dataset' END) AS gold_source,
  CASE WHEN b.unit = 'pair' THEN CASE WHEN b.good THEN 'correct' ELSE 'wrong' END
       WHEN b.gold IS NULL THEN 'no_gold'
       WHEN b.status <> 'ok' THEN 'wrong'
       WHEN b.pairwise THEN CASE WHEN b.preference = b.gold THEN 'correct' ELSE 'wrong' END
       WHEN b.unit = 'claim' THEN
         CASE WHEN (b.label_norm = 'supported') = (gn.norm = 'supported')
              THEN 'correct' ELSE 'wrong' END
       WHEN b.label_norm = gn.norm THEN 'correct' ELSE 'wrong' END AS outcome,
  CASE WHEN b.status <> 'ok' THEN NULL WHEN b.pairwise THEN b.preference
       ELSE b.label_norm END AS verdict
FROM base b LEFT JOIN labelmap gn ON gn.raw = b.gold
"""


def materialize_sql(rid: str) -> str:
    """CREATE TABLE m_<rid>: the view's rows without the raw outputs."""
    return f"""
CREATE OR REPLACE TABLE m_{rid} AS
SELECT * EXCLUDE (raw_output, claim_gold, good, adjudicated),
  concat_ws(chr(31), dataset, item_id, coalesce(variant, '')) AS slot,
  concat_ws(chr(31), dataset, item_id, judge_id) AS judged
FROM v_{rid}
"""


def flags_sql(rid: str) -> list[str]:
    """CREATE TABLE dis_<rid> (slots whose verdicts differ) and inc_<rid> (pairwise
    items whose two orders got different preferences from one judge)."""
    ok = f"FROM m_{rid} WHERE verdict IS NOT NULL"
    differ = "HAVING min(verdict) <> max(verdict)"
    return [
        f"CREATE OR REPLACE TABLE dis_{rid} AS SELECT slot {ok} GROUP BY slot {differ}",
        f"CREATE OR REPLACE TABLE inc_{rid} AS SELECT judged {ok} AND pairwise "
        f"GROUP BY judged {differ}",
    ]


def differ_sql(rid: str) -> str:
    """CREATE TABLE dif_<rid>: slots where two judges (the parameters) both gave a
    verdict and the verdicts differ."""
    return (
        f"CREATE OR REPLACE TABLE dif_{rid} AS SELECT slot FROM m_{rid} "
        "WHERE verdict IS NOT NULL AND judge_id IN (?, ?) GROUP BY slot "
        "HAVING count(DISTINCT judge_id) = 2 AND min(verdict) <> max(verdict)"
    )
