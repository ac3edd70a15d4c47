"""Upper bounds of the size parameters, checked when a spec, a policy file, a tuning grid
or a command line is read.

Each bound is far above any sane use and keeps the work finite: a bootstrap keeps one
float per resample and statistic (100,000 resamples: under 1 MB each, seconds of CPU on
a few thousand items; its interval's Monte Carlo error is already far below the third
decimal shown), a sweep or tuning grid evaluates every policy metric once per point, and
each apply worker is a thread holding a run's records.
"""

from __future__ import annotations

MAX_BOOTSTRAP = 100_000
"""Bootstrap resamples: spec `bootstrap`, `compare --n-boot`, `policies --resamples`."""

MAX_GRID_POINTS = 10_000
"""Points of a `policies sweep` range and candidates of a `policies tune` grid."""

MAX_WORKERS = 64
"""`policies apply --workers` (threads; the default 1 already gives the same outputs)."""

__all__ = ["MAX_BOOTSTRAP", "MAX_GRID_POINTS", "MAX_WORKERS"]
