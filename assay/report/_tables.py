"""MVR/FS tables: one row per judge, overall with CIs, then MVR per axis."""

from __future__ import annotations

from typing import Any

import pandas as pd

AXES = ("relation", "modality", "scope", "temporal", "numeric")


def force_summary_frame(metrics: pd.DataFrame) -> pd.DataFrame:
    """Wide summary: judge, N, failed, MVR [CI], FS [CI], MVR per axis. Sorted by MVR."""
    if metrics.empty:
        return pd.DataFrame()
    overall = metrics[metrics["group_by"] == "overall"].set_index("judge_id")
    out = pd.DataFrame(
        {
            "judge": overall.index,
            "N": overall["n"].to_numpy(),
            "failed": overall["n_failed"].to_numpy(),
            "MVR": overall["mvr"].to_numpy(),
            "MVR_lo": overall["mvr_lo"].to_numpy(),
            "MVR_hi": overall["mvr_hi"].to_numpy(),
            "FS": overall["fs"].to_numpy(),
            "FS_lo": overall["fs_lo"].to_numpy(),
            "FS_hi": overall["fs_hi"].to_numpy(),
        }
    )
    axis_rows = metrics[metrics["group_by"] == "axis"]
    for axis in AXES:
        sub = axis_rows[axis_rows["group"] == axis].set_index("judge_id")["mvr"]
        out[f"MVR_{axis}"] = out["judge"].map(sub)
    return out.sort_values(["MVR", "FS"], ascending=[True, False]).reset_index(drop=True)


def _ci(value: float, lo: float, hi: float) -> str:
    return f"{value:.3f} [{lo:.3f}, {hi:.3f}]"


def _short_ci(lo: float, hi: float) -> str:
    return f"{lo:.2f}–{hi:.2f}"


def force_table(metrics: pd.DataFrame, title: str | None = None, *, axes: bool = True) -> Any:
    """A rich Table of the wide summary (lower MVR and higher FS are better)."""
    from rich import box
    from rich.table import Table

    summary = force_summary_frame(metrics)
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        caption="MVR lower is better · FS higher is better · 95% bootstrap CIs"
        + (" · per-axis columns: MVR" if axes else ""),
    )
    table.add_column("judge", no_wrap=True, overflow="fold")
    for col in ("N", "fail", "MVR", "95% CI", "FS", "95% CI"):
        table.add_column(col, justify="right", no_wrap=True)
    if axes:
        for a in AXES:
            table.add_column(a[:4], justify="right", no_wrap=True)
    for _, row in summary.iterrows():
        cells = [
            str(row["judge"]),
            str(int(row["N"])),
            str(int(row["failed"])),
            f"{row['MVR']:.3f}",
            _short_ci(row["MVR_lo"], row["MVR_hi"]),
            f"{row['FS']:.3f}",
            _short_ci(row["FS_lo"], row["FS_hi"]),
        ]
        if axes:
            cells += ["—" if pd.isna(row[f"MVR_{a}"]) else f"{row[f'MVR_{a}']:.2f}" for a in AXES]
        table.add_row(*cells)
    return table


def render_force_report(metrics: pd.DataFrame, fmt: str) -> str:
    """Text renderings for `assay report --format json|csv|markdown` (full long table)."""
    if fmt == "json":
        return str(metrics.to_json(orient="records", indent=2))
    if fmt == "csv":
        return str(metrics.to_csv(index=False))
    if fmt == "markdown":
        summary = force_summary_frame(metrics)
        headers = ["judge", "N", "failed", "MVR [95% CI]", "FS [95% CI]", *AXES]
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        for _, row in summary.iterrows():
            cells = [
                str(row["judge"]),
                str(int(row["N"])),
                str(int(row["failed"])),
                _ci(row["MVR"], row["MVR_lo"], row["MVR_hi"]),
                _ci(row["FS"], row["FS_lo"], row["FS_hi"]),
                *["—" if pd.isna(row[f"MVR_{a}"]) else f"{row[f'MVR_{a}']:.2f}" for a in AXES],
            ]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown format {fmt!r}")
