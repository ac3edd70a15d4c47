"""The wide MVR/FS summary frame behind the HTML report (one row per judge)."""

from __future__ import annotations

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
