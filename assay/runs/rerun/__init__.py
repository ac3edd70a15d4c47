"""A run executed again from its directory alone (`assay rerun`): the spec, prompts
and datasets rebuilt from the manifest and snapshot, checked by sha256, into a new run
directory that records the run it re-ran."""

from assay.runs.rerun._rebuild import RerunSource
from assay.runs.rerun._rerun import RerunOptions, prepared_rerun, rerun

__all__ = ["RerunOptions", "RerunSource", "prepared_rerun", "rerun"]
