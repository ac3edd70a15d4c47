"""Factuality tables: one row per verifier, macro and micro always labelled."""

from __future__ import annotations

from typing import Any

import pandas as pd


def factuality_frame(metrics: dict[str, Any] | None) -> pd.DataFrame:
    """The per-verifier rows of `metrics.json["factuality"]["scores"]` as a DataFrame."""
    if not metrics:
        return pd.DataFrame()
    return pd.DataFrame((metrics.get("scores") or {}).get("rows", []))


def _num(value: Any, fmt: str = ".3f") -> str:
    return "—" if value is None or pd.isna(value) else format(value, fmt)


def _ci(lo: Any, hi: Any) -> str:
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return "—"

    def short(v: float) -> str:  # ".34" rather than "0.34": the table must fit 80 columns
        text = f"{v:.2f}"
        return text[1:] if text.startswith("0.") else text

    return f"{short(lo)}–{short(hi)}"


def factuality_table(metrics: dict[str, Any] | None, title: str | None = None) -> Any:
    """A rich Table: responses, 0-claim rate, claims scored/unscored, macro and micro."""
    from rich import box
    from rich.table import Table

    frame = factuality_frame(metrics)
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        caption="supported / scored claims · macro: mean over responses · micro: over all "
        "claims · CI: 95% bootstrap · 0-cl: responses with no claim · unsc: claims not "
        "scored (never counted as supported)",
    )
    table.add_column("verifier", no_wrap=True, overflow="fold")
    for col in ("resp", "0-cl", "claims", "unsc", "macro (CI)", "micro (CI)"):
        table.add_column(col, justify="right", no_wrap=True)
    for _, row in frame.iterrows():
        table.add_row(
            str(row["verifier_id"]),
            str(int(row["n_responses"])),
            _num(row["zero_claim_rate"], ".0%"),
            str(int(row["n_claims"])),
            str(int(row["n_unscored"])),
            f"{_num(row['macro'], '.2f')} ({_ci(row['macro_lo'], row['macro_hi'])})",
            f"{_num(row['micro'], '.2f')} ({_ci(row['micro_lo'], row['micro_hi'])})",
        )
    return table


def factuality_markdown(metrics: dict[str, Any] | None) -> str:
    frame = factuality_frame(metrics)
    headers = [
        "verifier",
        "responses",
        "0-claim rate",
        "claims",
        "scored",
        "unscored",
        "macro [95% CI]",
        "micro [95% CI]",
    ]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for _, r in frame.iterrows():
        lines.append(
            "| "
            + " | ".join(
                [
                    str(r["verifier_id"]),
                    str(int(r["n_responses"])),
                    _num(r["zero_claim_rate"], ".1%"),
                    str(int(r["n_claims"])),
                    str(int(r["n_scored"])),
                    str(int(r["n_unscored"])),
                    f"{_num(r['macro'])} [{_num(r['macro_lo'])}, {_num(r['macro_hi'])}]",
                    f"{_num(r['micro'])} [{_num(r['micro_lo'])}, {_num(r['micro_hi'])}]",
                ]
            )
            + " |"
        )
    return "\n".join(lines) + "\n"
