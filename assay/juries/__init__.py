"""Juries: a judge id whose verdicts are votes of other judges' recorded verdicts
(Verga et al. 2024, "Replacing Judges with Juries"), declared by `[[juries]]`."""

from assay.juries._records import jury_records
from assay.juries._spec import JuryBlocks, JurySpec
from assay.juries._sync import check_juries, juries_of, refresh_jury_records

__all__ = [
    "JuryBlocks",
    "JurySpec",
    "check_juries",
    "juries_of",
    "jury_records",
    "refresh_jury_records",
]
