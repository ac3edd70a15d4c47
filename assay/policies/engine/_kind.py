"""What a policy kind is to the jobs that drive it: one base class, registered in `POLICIES`.

Every kind — the three built-in ones and a user's (`@policy`) — is a class deriving
`PolicyKind`, registered by name in `assay.core.registry.POLICIES`. The jobs (`apply`,
`tune`, `sweep`, `compare`, `export`, report curves and samples) look a kind up there and
call its hooks; none of them names a kind or keeps a table of kinds. A kind overrides the
hooks it supports; the defaults here refuse with one line naming the kinds that do, so a
new kind is usable by `apply` as soon as it implements `from_block`, `describe`, `decide`
and `apply`.

The class attributes say what a kind offers without building it (reports read manifests
of kinds that may not be registered in the reading process: `kind_class` is then None
and the reader falls back to these defaults).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assay.core.registry import POLICIES
from assay.errors import SpecError
from assay.policies.engine._apply_common import Chain, Outputs, Settings, _consumed
from assay.policies.engine._results import (
    Axes,
    MetricDelta,
    Resolved,
    SweepResult,
    TuneRun,
)
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tuning import TuningSpec

if TYPE_CHECKING:
    from typing import Self

Dump = dict[str, Any]
Links = dict[tuple[str, str], dict[str, Any]]


class PolicyKind:
    """A policy kind: a pure decision function (`describe`, `decide`) built from its
    configuration, and the hooks that carry it over a run directory."""

    kind: ClassVar[str]
    version: ClassVar[int]
    config: Any

    empty_note: ClassVar[str] = "no responses to evaluate"
    """The warning when a run gives the policy nothing to decide."""
    chainable: ClassVar[bool] = False
    """A claim-level policy's `after =` may name a policy of this kind (a gate)."""
    sweep_ranges: ClassVar[Mapping[str, tuple[str, str, str]]] = {}
    """Threshold -> default (from, to, step) of `policies sweep`; the first is the default."""
    takes_ties: ClassVar[bool] = False
    """`policies sweep --tie` moves another threshold with the swept one."""
    tuned_keys: ClassVar[tuple[str, ...]] = ()
    """Config keys `policies tune --write-policy` writes; empty: the kind does not tune."""
    curve_axes: ClassVar[Axes | None] = None
    """Coverage and risk metrics of the report's risk–coverage curve (None: no curve)."""
    compares: ClassVar[bool] = False
    """`policies compare` computes paired deltas of two policies of this kind."""
    audits: ClassVar[bool] = False
    """`policies export --what audit` rebuilds audit objects of this kind."""

    @classmethod
    def from_block(cls, block: Mapping[str, Any], file: str) -> Self:
        """The policy a `[[policies]]` block describes; a bad block is one line."""
        raise NotImplementedError

    @property
    def name(self) -> str:
        return str(self.config.name)

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    def decide(self, inputs: Any) -> Any:
        raise NotImplementedError

    # -- apply ----------------------------------------------------------------------------
    def apply(self, run: RunInputs, settings: Settings, chain: Chain | None, file: str) -> Outputs:
        """Output records, metrics and identity of this policy over the run (`file`: the
        policy file, for error lines)."""
        raise NotImplementedError

    def records_read(self, run: RunInputs, chain: Chain | None) -> dict[str, str]:
        """sha256 of each input file's records the policy reads (as `apply` records)."""
        return _consumed(run, chain)

    # -- tune and sweep -------------------------------------------------------------------
    def _unsupported(self, what: str, attribute: str, field: str) -> SpecError:
        """One line naming the kinds that do offer `what` (those with `attribute`)."""
        kinds = ", ".join(kinds_with(attribute))
        return SpecError(f"{what} built for {kinds}; {self.name!r} is a {self.kind}", field=field)

    def tune(
        self, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
    ) -> TuneRun:
        raise self._unsupported("tuning is", "tuned_keys", "--name")

    @classmethod
    def sweep_base(cls, param: str) -> str:
        """The threshold a `--param` names (a kind may accept qualified names)."""
        return param

    @classmethod
    def default_ties(cls, param: str) -> tuple[str, ...]:
        """The ties a sweep of `param` makes when the user gives no `--tie`."""
        return ()

    def sweep(
        self, run: RunInputs, chain: Chain | None, resolved: Resolved, file: str
    ) -> SweepResult:
        raise self._unsupported("sweeps are", "sweep_ranges", "--name")

    # -- decisions again from an applied policy's manifest ----------------------------------
    def default_curve(self, run: RunInputs, inputs: Dump, links: Links | None) -> list[Dump]:
        """The kind's default sweep on the inputs a manifest names, as curve points."""
        raise self._unsupported("risk–coverage curves are", "curve_axes", "--name")

    def paired_deltas(
        self,
        other: Self,
        run: RunInputs,
        sides: Sequence[tuple[Dump, Links | None]],
        metrics: Sequence[str] | None,
        bootstrap: dict[str, int],
    ) -> list[MetricDelta]:
        """`self - other` per metric on the inputs each manifest names (`sides`)."""
        raise self._unsupported("comparisons are", "compares", "--a")

    def audit_records(self, run: RunInputs, inputs: Dump, links: Links | None) -> list[Dump]:
        raise self._unsupported("audit records are", "audits", "--what")

    # -- gates ----------------------------------------------------------------------------
    def chain_links(self, run: RunInputs, gate_id: str) -> Links:
        """(dataset, answer_id) -> this gate's decision as claim-level kinds read it."""
        raise self._unsupported("chains (`after =`) are", "chainable", "after")

    def chain(self, run: RunInputs, file: str) -> Chain:
        """The chain a claim-level policy with `after = <this policy>` reads."""
        raise self._unsupported("chains (`after =`) are", "chainable", "after")

    # -- reports --------------------------------------------------------------------------
    @classmethod
    def report_thresholds(cls, config: Mapping[str, Any]) -> dict[str, str]:
        """The values a reader compares applied policies of this kind by."""
        return {}

    @classmethod
    def sample_renderings(cls, folder: Path, answers: Any) -> list[Any]:
        """A few decided answers as a reader should see them ([]: none to show)."""
        return []


def kind_class(kind: str) -> type[PolicyKind] | None:
    """The class registered as `kind` (None: not registered in this process)."""
    if kind not in POLICIES:
        return None
    found = POLICIES.get(kind)
    return found if isinstance(found, type) and issubclass(found, PolicyKind) else None


def known_kinds() -> list[str]:
    """Every registered kind, built-in or a user's (`@policy`, plugins), sorted."""
    return sorted(k for k in POLICIES if kind_class(k) is not None)


def kinds_with(attribute: str) -> list[str]:
    """The registered kinds offering `attribute` (a true class attribute), sorted."""
    return [k for k in known_kinds() if getattr(kind_class(k), attribute, None)]


def chainable_kinds() -> list[str]:
    return kinds_with("chainable")


__all__ = [
    "Links",
    "PolicyKind",
    "chainable_kinds",
    "kind_class",
    "kinds_with",
    "known_kinds",
]
