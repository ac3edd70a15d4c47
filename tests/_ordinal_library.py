"""The ordinal statistics as the field's libraries compute them (sklearn, krippendorff):
the independent reference the ordinal tests compare assay's figures with."""

from __future__ import annotations

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score, mean_absolute_error


def library_ordinal(gold: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    return {
        "linear_kappa": cohen_kappa_score(gold, pred, weights="linear", labels=[0, 1, 2]),
        "quadratic_kappa": cohen_kappa_score(gold, pred, weights="quadratic", labels=[0, 1, 2]),
        "ordinal_alpha": krippendorff.alpha(
            reliability_data=np.vstack([pred, gold]).astype(float),
            level_of_measurement="ordinal",
            value_domain=[0.0, 1.0, 2.0],
        ),
        "mae_rank": mean_absolute_error(gold, pred),
    }
