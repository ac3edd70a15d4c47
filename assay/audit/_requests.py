"""`requests`: every recorded request key reproduced from the snapshotted prompt bytes
and the dataset rows, with no model call."""

from __future__ import annotations

from pathlib import Path

from assay.audit._model import Check, verdict
from assay.core.manifest import Manifest
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_rows,
)

LLM_FILES = (JUDGMENTS_FILE, ITEM_JUDGMENTS_FILE, SENTENCES_FILE, VERIFICATIONS_FILE)


def check_requests(run_dir: Path, manifest: Manifest) -> Check:
    del manifest
    keyed = 0
    unkeyed = 0
    for name in LLM_FILES:
        if not (run_dir / name).is_file():
            continue
        for row in iter_rows(run_dir / name):
            if row.get("request_key"):
                keyed += 1
            elif row.get("prompt_sha256"):
                unkeyed += 1
    notes = []
    if unkeyed:
        notes.append(
            f"{unkeyed} model records carry no request_key (written before assay recorded "
            "request keys): their requests cannot be checked"
        )
    if keyed:
        notes.append(f"{keyed} request keys recorded; re-rendering them is not implemented yet")
    return verdict("requests", 0, [], notes, skipped=keyed + unkeyed)
