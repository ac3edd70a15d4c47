"""Hand-checked tests for the deterministic baseline judges (assay/judges/_baselines.py)."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pytest

from assay.core.judging import Judge, JudgeItem, Judgment, Status
from assay.core.pairs import Axis, ForcePair
from assay.errors import SpecError
from assay.judges._baselines import (
    BASELINES,
    BaselineJudge,
    CitationPresenceJudge,
    EntityOverlapJudge,
    ForceCheckAxisJudge,
    ForceCheckRuleJudge,
    TokenOverlapJudge,
    baseline,
    content_tokens,
)

DEMO = Path(__file__).resolve().parents[1] / "assay" / "data" / "forcebench_demo.jsonl"

IDS = {
    "citation-presence": "baseline:citation-presence",
    "token-overlap": "baseline:token-overlap",
    "entity-overlap": "baseline:entity-overlap",
    "forcecheck-rule": "baseline:forcecheck-rule",
    "forcecheck-axis": "baseline:forcecheck-axis",
}


def item(claim: str, evidence: str) -> JudgeItem:
    return JudgeItem(claim=claim, evidence=evidence)


def check_invariants(j: Judgment) -> None:
    assert j.status is Status.OK
    assert j.score is not None and 0.0 <= j.score <= 1.0
    assert j.label in ("supported", "unsupported")
    assert isinstance(j.parsed, dict)
    json.dumps(j.parsed)  # features must be JSON-serialisable for judgments.jsonl
    assert j.attempts == 0
    assert j.cache_hit is False
    assert j.error is None


# ------------------------------------------------------------------ citation presence


async def test_citation_presence() -> None:
    judge = CitationPresenceJudge()
    # Any non-blank evidence: 1.0, whatever the claim says.
    j = await judge(item("The moon is made of cheese.", "Lunar rock samples are basaltic."))
    check_invariants(j)
    assert j.score == 1.0 and j.label == "supported"
    assert j.parsed == {"evidence_present": True, "evidence_chars": 32}
    for empty in ("", "   \n"):
        j = await judge(item("Anything.", empty))
        check_invariants(j)
        assert j.score == 0.0 and j.label == "unsupported"
        assert j.parsed == {"evidence_present": False, "evidence_chars": 0}


# ------------------------------------------------------------------ token overlap


def test_content_tokens_normalisation() -> None:
    # Stopwords go; "Studies" -> "study" (-ies), "mice" -> "mouse" (irregular), "rats"
    # -> "rat" (-s), "1,000" -> "1000", "12%" and "3.5" stay whole; "was" is kept out
    # by the stopword check before normalisation.
    assert content_tokens("Studies of 1,000 mice and rats was 12% or 3.5 times") == [
        "study",
        "1000",
        "mouse",
        "rat",
        "12%",
        "3.5",
        "time",
    ]
    # "not" is deliberately not a stopword; "world's" loses its possessive.
    assert content_tokens("It is not the world's largest") == ["not", "world", "largest"]


async def test_token_overlap_hand_checked() -> None:
    judge = TokenOverlapJudge()
    claim = "Regular exercise reduces the risk of heart disease by 12%."
    evidence = (
        "In a cohort of 3,000 adults, regular exercise was associated with a 12% lower "
        "risk of heart attacks."
    )
    # claim content tokens: regular exercise reduce risk heart disease 12%   (7)
    # in evidence:          regular exercise risk heart 12%                 (5)
    # missing:              reduce disease
    # score = 5/7 = 0.714286 -> supported
    j = await judge(item(claim, evidence))
    check_invariants(j)
    assert j.score == pytest.approx(5 / 7, abs=1e-6)
    assert j.label == "supported"
    assert j.parsed is not None
    assert j.parsed["claim_tokens"] == 7
    assert j.parsed["matched"] == ["12%", "exercise", "heart", "regular", "risk"]
    assert j.parsed["missing"] == ["disease", "reduce"]


async def test_token_overlap_plural_folding_and_threshold() -> None:
    # "Studies"->study, "mice"->mouse, "tumours"->tumour on both sides: 3/3 = 1.0.
    j = await TokenOverlapJudge()(item("Studies in mice show tumours.", "A study: mouse tumour."))
    assert j.parsed is not None and j.parsed["missing"] == ["show"]
    # claim tokens: study mouse show tumour (4); "show" missing -> 3/4 = 0.75
    assert j.score == pytest.approx(0.75)
    # With threshold 0.8 the same score is unsupported.
    j = await TokenOverlapJudge(threshold=0.8)(
        item("Studies in mice show tumours.", "A study: mouse tumour.")
    )
    assert j.score == pytest.approx(0.75) and j.label == "unsupported"


async def test_token_overlap_degenerate() -> None:
    j = await TokenOverlapJudge()(item("It is what it is.", "Anything at all."))
    check_invariants(j)
    assert j.score == 0.0 and j.label == "unsupported"
    assert j.parsed is not None and j.parsed["note"] == "claim has no content tokens"
    j = await TokenOverlapJudge()(item("Coffee helps.", ""))
    assert j.score == 0.0


# ------------------------------------------------------------------ entity overlap


def test_entity_extraction() -> None:
    ents = EntityOverlapJudge.entities(
        "The World Health Organization said in 2019 that New York had 3.5% more cases. "
        "Aspirin helps. WHO agrees."
    )
    assert [(s, k) for s, _, k in ents] == [
        ("World Health Organization", "name"),  # leading "The" dropped
        ("2019", "year"),
        ("New York", "name"),
        ("3.5%", "number"),
        ("WHO", "name"),  # acronym: kept even at sentence start
    ]  # "Aspirin" is a lone capitalised sentence-initial word: not an entity


async def test_entity_overlap_hand_checked() -> None:
    claim = "The WHO reported 1,200 cases in Brazil in 2021."
    evidence = "According to the WHO, Brazil recorded about 1200 cases."
    # entities: WHO, 1,200 (-> 1200), Brazil, 2021 (year)           (4)
    # found:    WHO, 1,200, Brazil; missing: 2021   -> 3/4 = 0.75
    j = await EntityOverlapJudge()(item(claim, evidence))
    check_invariants(j)
    assert j.score == pytest.approx(0.75)
    assert j.parsed == {
        "fallback": None,
        "entities": ["WHO", "1,200", "Brazil", "2021"],
        "years": ["2021"],
        "found": ["WHO", "1,200", "Brazil"],
        "missing": ["2021"],
    }


async def test_entity_overlap_multiword_names_match_contiguously() -> None:
    claim = "New York City banned trans fats."
    # "New York City" is one name (a multi-word run may start a sentence).
    j = await EntityOverlapJudge()(item(claim, "In 2006, new york city restricted trans fat."))
    assert j.score == 1.0
    # The words are all there, but not as the name: 0/1.
    j = await EntityOverlapJudge()(item(claim, "York is a city in New England."))
    assert j.score == 0.0 and j.label == "unsupported"


async def test_entity_overlap_falls_back_to_token_overlap() -> None:
    # No entities ("Coffee" is just sentence-initial), so token overlap is used:
    # claim tokens coffee lower blood pressure athlete (5); evidence lacks athlete -> 4/5
    j = await EntityOverlapJudge()(
        item(
            "Coffee lowers blood pressure in athletes.",
            "Blood pressure was lower in coffee drinkers.",
        )
    )
    check_invariants(j)
    assert j.score == pytest.approx(0.8)
    assert j.parsed is not None
    assert j.parsed["fallback"] == "token-overlap"
    assert j.parsed["entities"] == []
    assert j.parsed["missing"] == ["athlete"]


# ------------------------------------------------------------------ rule ForceCheck


def test_rule_cues() -> None:
    cues = ForceCheckRuleJudge.cues
    assert cues("Smartphone use causes anxiety in all teenagers.") == {
        "causal": ["causes"],
        "universal": ["all"],
    }
    assert cues("The drug will definitely cut costs by 40% today.") == {
        "certainty": ["definitely", "will"],
        "recency": ["today"],
        "exact_number": ["40%"],
    }
    assert cues("Lagos is the largest city in Nigeria.") == {"recency": ["is the largest"]}
    # Hedged, ranged and year numbers are not exact; nor are COVID-19 or ordinals.
    assert (
        cues("About 40% rose 10-15%, between 3 and 5, in 2019, 3.5 ± 0.2, COVID-19, the 21st") == {}
    )
    assert cues("Coffee may be associated with lower risk in some adults.") == {}
    # Past-tense change verbs are causal only as verbs; bounds and ages are not exact.
    assert cues("Walking reduced the risk of falls.") == {"causal": ["reduced"]}
    assert cues("Walkers had a reduced risk of falls.") == {}
    assert cues("Adults aged 65 and older took 3 or more pills.") == {}
    assert cues("The suspension was permanent.") == {"recency": ["permanent"]}


async def test_rule_hand_checked() -> None:
    evidence = "Among 500 surveyed teenagers, heavy smartphone use was correlated with anxiety."
    claim = "Smartphone use causes anxiety in all teenagers."
    # claim tokens: smartphone use cause anxiety teenager (5); "cause" missing -> 4/5 = 0.8
    # cues: causal, universal -> 2 x 0.15 = 0.30;  0.8 - 0.3 = 0.5 -> supported (>= 0.5)
    j = await ForceCheckRuleJudge()(item(claim, evidence))
    check_invariants(j)
    assert j.score == pytest.approx(0.5)
    assert j.label == "supported"
    assert j.parsed is not None
    assert j.parsed["token_overlap"] == pytest.approx(0.8)
    assert j.parsed["cue_classes"] == ["causal", "universal"]
    assert j.parsed["penalty_total"] == pytest.approx(0.3)
    # Per-class override: causal 0.5, universal stays 0.15 -> 0.8 - 0.65 = 0.15
    j = await ForceCheckRuleJudge(penalties={"causal": 0.5})(item(claim, evidence))
    assert j.score == pytest.approx(0.15) and j.label == "unsupported"


async def test_rule_three_classes_and_clipping() -> None:
    evidence = "The drug cut costs by about 40% in 2015."
    claim = "The drug will definitely cut costs by 40% today."
    # claim tokens: drug definitely cut cost 40% today (6); matched drug cut cost 40% -> 4/6
    # cues: certainty, recency, exact_number -> 0.45;  4/6 - 0.45 = 0.216667
    j = await ForceCheckRuleJudge()(item(claim, evidence))
    assert j.score == pytest.approx(4 / 6 - 0.45, abs=1e-6)
    # Penalty 0.4 per class: 4/6 - 1.2 < 0 -> clipped to 0.0
    j = await ForceCheckRuleJudge(penalty=0.4)(item(claim, evidence))
    check_invariants(j)
    assert j.score == 0.0


# ------------------------------------------------------------------ axis-aware ForceCheck

# (axis, evidence, calibrated claim keeping the limiter, raised claim dropping it)
AXIS_CASES = [
    (
        Axis.RELATION,
        "In a 10-year observational cohort, coffee consumption was associated with lower "
        "rates of liver disease.",
        "Coffee consumption is associated with lower rates of liver disease.",
        "Coffee consumption lowers rates of liver disease.",
    ),
    (
        Axis.MODALITY,
        "The trial results suggest that the vaccine may reduce hospital admissions.",
        "The vaccine may reduce hospital admissions.",
        "The vaccine will reduce hospital admissions.",
    ),
    (
        Axis.SCOPE,
        "In adults over 65, daily walking reduced fall risk.",
        "In adults over 65, daily walking reduced fall risk.",
        "Daily walking reduced fall risk.",
    ),
    (
        Axis.TEMPORAL,
        "As of 2019, Lagos was the largest city in Nigeria.",
        "As of 2019, Lagos was the largest city in Nigeria.",
        "Lagos is the largest city in Nigeria.",
    ),
    (
        Axis.NUMERIC,
        "The program cut energy use by 10–15% across participating households.",
        "The program cut energy use by 10–15% across participating households.",
        "The program cut energy use by 15% across participating households.",
    ),
]


@pytest.mark.parametrize(("axis", "evidence", "calibrated", "raised"), AXIS_CASES)
async def test_axis_fires_on_dropped_limiter(
    axis: Axis, evidence: str, calibrated: str, raised: str
) -> None:
    judge = ForceCheckAxisJudge()
    cal = await judge(item(calibrated, evidence))
    rai = await judge(item(raised, evidence))
    check_invariants(cal)
    check_invariants(rai)
    assert cal.parsed is not None and rai.parsed is not None
    # Every claim token is in the evidence in all ten claims, so overlap is 1.0:
    # calibrated fires nothing -> 1.0; raised fires exactly its axis -> 1.0 - 0.3 = 0.7.
    assert cal.parsed["axes_fired"] == []
    assert rai.parsed["axes_fired"] == [axis.value]
    assert cal.score == 1.0
    assert rai.score == pytest.approx(0.7)
    assert rai.score is not None and cal.score > rai.score
    assert axis.value in rai.parsed["evidence_limiters"]


@pytest.mark.parametrize(
    ("claim", "evidence", "fired", "reason_part"),
    [
        # scope: dropped limiting quantifier, and generalisation
        ("Patients reported relief.", "Some patients reported relief.", ["scope"], "quantifier"),
        (
            "All patients reported relief.",
            "Some patients reported relief.",
            ["scope"],
            "generalises",
        ),
        # scope: "with <condition>" qualifier dropped ("diabetes" normalises to "diabete")
        ("Women benefited.", "Women with type 2 diabetes benefited.", ["scope"], "qualifier"),
        # numeric: a bigger figure than the evidence gives, even hedged
        ("Prices rose about 35%.", "Prices rose up to 20%.", ["numeric"], "exceed"),
        # modality: strong certainty even alongside a hedge
        ("It may definitely help.", "It may help.", ["modality"], "strong certainty"),
        # temporal: dated evidence, claim with "currently" despite keeping the year
        ("In 2019 it is currently the norm.", "In 2019 it was the norm.", ["temporal"], "recency"),
    ],
)
async def test_axis_other_triggers(
    claim: str, evidence: str, fired: list[str], reason_part: str
) -> None:
    j = await ForceCheckAxisJudge()(item(claim, evidence))
    assert j.parsed is not None
    assert j.parsed["axes_fired"] == fired
    assert any(reason_part in r for r in j.parsed["reasons"][fired[0]])


@pytest.mark.parametrize(
    ("claim", "evidence", "axis", "reason_part"),
    [
        # relation: past-tense change verb used as a verb, evidence only associational
        (
            "Drinking coffee reduced the incidence of diabetes.",
            "In a cohort, drinking coffee was associated with a lower incidence of diabetes.",
            "relation",
            "reduced",
        ),
        # scope: population in a limiting construction dropped ("in laboratory mice")
        (
            "A high-fat diet with inulin reduced weight gain.",
            "A study in laboratory mice found a high-fat diet with inulin reduced weight gain.",
            "scope",
            "population (mouse)",
        ),
        # scope: the claim names a population the evidence never mentions
        (
            "In humans, inulin reduced weight gain.",
            "Inulin reduced weight gain.",
            "scope",
            "does not (human)",
        ),
        # scope: place after "in" dropped
        (
            "Women made up 60% of weavers.",
            "A survey of mills in Lancashire found women made up 60% of weavers.",
            "scope",
            "place (lancashire)",
        ),
        # scope: quantifier bound to a claim word strengthened (some -> most)
        (
            "Most merchant households owned porcelain.",
            "Records show that some merchant households owned porcelain.",
            "scope",
            "strengthens",
        ),
        # temporal: a time-limited finding made permanent
        (
            "The regulation permanently suspended the requirement.",
            "A 2016 regulation temporarily suspended the requirement.",
            "temporal",
            "permanently",
        ),
        # temporal: the evidence dates the finding; a present-tense claim has no anchor
        (
            "The law requires two witnesses.",
            "Until 2009 the law required two witnesses.",
            "temporal",
            "no date",
        ),
        # numeric: a ceiling turned into a floor
        (
            "Over 40% of cases were resolved.",
            "Nearly 40% of cases were resolved.",
            "numeric",
            "floor",
        ),
        # numeric: insisted exactness against an uncertainty
        (
            "The half-life was measured at exactly 2.1 milliseconds.",
            "The half-life was measured at 2.1 milliseconds, plus or minus 0.4 milliseconds.",
            "numeric",
            "exactness",
        ),
    ],
)
async def test_axis_refined_triggers(
    claim: str, evidence: str, axis: str, reason_part: str
) -> None:
    j = await ForceCheckAxisJudge()(item(claim, evidence))
    assert j.parsed is not None
    assert j.parsed["axes_fired"] == [axis], j.parsed
    assert any(reason_part in r for r in j.parsed["reasons"][axis]), j.parsed["reasons"]


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The drug will likely help.", "The drug may help."),  # hedge kept
        # "a 2019 study" dates the source, not the finding: present tense is fine
        (
            "Coffee drinkers have lower blood pressure.",
            "A 2019 study: coffee drinkers had lower blood pressure.",
        ),
        # "a reduced risk" is an adjective, not a causal verb; "more likely" is no hedge
        ("Smokers had a reduced risk.", "Smokers were more likely to have a reduced risk."),
        # the claim keeps the population and the quantifier
        (
            "In laboratory mice, some animals gained less weight.",
            "In laboratory mice, some animals gained less weight.",
        ),
        # a point value the evidence itself states exactly is no numeric raise
        (
            "Strokes fell by 20% to 30% within 90 days.",
            "Strokes fell by between 20% and 30% within 90 days.",
        ),
        ("Women with diabetes benefited.", "Women with type 2 diabetes benefited."),
        # causal language the evidence itself uses is not a relation raise
        (
            "The drug reduces pain.",
            "In a randomised trial the drug reduces pain; relief was associated with sleep.",
        ),
        ("Sales rose 10-15% in 2019.", "Sales rose by 10-15% in 2019."),
        ("Patients reported relief.", "Patients reported relief."),  # no limiter at all
    ],
)
async def test_axis_quiet_when_limiter_kept(claim: str, evidence: str) -> None:
    j = await ForceCheckAxisJudge()(item(claim, evidence))
    assert j.parsed is not None and j.parsed["axes_fired"] == []


async def test_axis_all_five_and_clipping() -> None:
    evidence = (
        "A 2015 observational study suggests that about 10–20% of older adults in Japan "
        "may benefit; benefit was associated with walking."
    )
    claim = "Walking causes benefits for all people today, 25% of them."
    # claim tokens: walking cause benefit people today 25% (6); matched walking benefit -> 1/3
    # all five axes fire -> 1/3 - 1.5 < 0 -> clipped to 0.0
    j = await ForceCheckAxisJudge()(item(claim, evidence))
    check_invariants(j)
    assert j.parsed is not None
    assert j.parsed["token_overlap"] == pytest.approx(1 / 3, abs=1e-6)
    assert j.parsed["axes_fired"] == ["relation", "modality", "scope", "temporal", "numeric"]
    assert j.parsed["penalty_total"] == pytest.approx(1.5)
    assert j.score == 0.0 and j.label == "unsupported"
    # Per-axis weights: only relation penalised (0.1) -> 1/3 - 0.1 = 0.233333
    zero = dict.fromkeys(ForceCheckAxisJudge.AXES, 0.0)
    j = await ForceCheckAxisJudge(penalties={**zero, "relation": 0.1})(item(claim, evidence))
    assert j.score == pytest.approx(1 / 3 - 0.1, abs=1e-6)


# ------------------------------------------------------------------ ids, describe, registry


@pytest.mark.parametrize(("short", "judge_id"), sorted(IDS.items()))
def test_ids_and_describe_stable(short: str, judge_id: str) -> None:
    a, b = baseline(short), BASELINES[short]()
    assert isinstance(a, Judge) and isinstance(a, BaselineJudge)
    assert a.id == b.id == judge_id
    d = a.describe()
    assert d == b.describe() == a.describe()
    assert d["id"] == judge_id and d["name"] == short
    assert d["kind"] == "baseline"
    assert isinstance(d["version"], str) and d["version"]
    assert isinstance(d["lexicon_sha256"], str) and len(d["lexicon_sha256"]) == 16
    assert d["threshold"] == 0.5
    json.dumps(d)


def test_describe_lists_parameters() -> None:
    d = ForceCheckAxisJudge(penalty=0.2, penalties={"numeric": 0.5}, threshold=0.6).describe()
    assert d["penalties"] == {
        "relation": 0.2,
        "modality": 0.2,
        "scope": 0.2,
        "temporal": 0.2,
        "numeric": 0.5,
    }
    assert d["threshold"] == 0.6
    d = ForceCheckRuleJudge().describe()
    assert d["penalties"] == dict.fromkeys(
        ("causal", "certainty", "universal", "recency", "exact_number"), 0.15
    )
    assert ForceCheckAxisJudge().describe()["penalties"]["scope"] == 0.3
    # Parameters change describe(); the id does not.
    assert ForceCheckRuleJudge(penalty=0.2).describe() != ForceCheckRuleJudge().describe()
    assert ForceCheckRuleJudge(penalty=0.2).id == ForceCheckRuleJudge().id


def test_registry() -> None:
    assert list(BASELINES) == list(IDS)
    assert isinstance(baseline("baseline:token-overlap"), TokenOverlapJudge)
    j = baseline("forcecheck-axis", penalty=0.1)
    assert isinstance(j, ForceCheckAxisJudge) and j.penalties["scope"] == 0.1


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(SpecError) as exc:
        baseline("bm25")
    msg = str(exc.value)
    assert "bm25" in msg
    for short in IDS:
        assert short in msg


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("token-overlap", {"penalty": 0.1}),  # not a parameter of this baseline
        ("forcecheck-rule", {"penalty": 1.5}),
        ("forcecheck-rule", {"penalties": {"scope": 0.1}}),  # an axis, not a cue class
        ("forcecheck-axis", {"penalties": {"causal": 0.1}}),
        ("citation-presence", {"threshold": -0.1}),
        ("entity-overlap", {"threshold": True}),
    ],
)
def test_bad_parameters_raise_spec_error(name: str, params: dict[str, object]) -> None:
    with pytest.raises(SpecError) as exc:
        baseline(name, **params)
    # The message alone (callers may drop `field`) names the offending parameter or key.
    offending = next(iter(params.values())) if "penalties" in params else params
    assert isinstance(offending, dict)
    assert any(key in exc.value.message for key in offending)


async def test_deterministic() -> None:
    for cls in BASELINES.values():
        judge = cls()
        for _, evidence, calibrated, raised in AXIS_CASES:
            for claim in (calibrated, raised):
                first = await judge(item(claim, evidence))
                second = await judge(item(claim, evidence))
                check_invariants(first)
                assert first == second


# ------------------------------------------------------------------ demo data set


def _demo_pairs() -> list[ForcePair]:
    """The bundled demo set ships with the package, so it must be there."""
    pairs = [
        ForcePair.model_validate(json.loads(line))
        for line in DEMO.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert len(pairs) >= 50
    return pairs


async def test_axis_judge_scores_raised_below_calibrated_on_demo() -> None:
    pairs = _demo_pairs()
    judge = ForceCheckAxisJudge()
    cal: list[float] = []
    rai: list[float] = []
    for pair in pairs:
        for claim, out in ((pair.calibrated_claim, cal), (pair.raised_claim, rai)):
            j = await judge(JudgeItem(claim=claim, evidence=pair.evidence, question=pair.question))
            check_invariants(j)
            assert j.score is not None
            out.append(j.score)
    assert sum(rai) / len(rai) < sum(cal) / len(cal)


# ------------------------------------------------------------------ versioned lexicon files

LEXICON_DIR = Path(__file__).resolve().parents[1] / "assay" / "judges" / "lexicons"

#: The released lexicon files. A released file is never edited: a changed list is a new
#: file (name@N+1.toml) with a new entry here, and the judges that read it say so.
FROZEN_LEXICONS = {
    "tokens@1": "1f902f74c78f3fd954fd47e3a878ff5f16b169d5e8d9620c5220ab447d6c50d2",
    "numbers@1": "f2110464e514819e8980d4a594797ec69092371923602d9e8c213ea6f12af1b9",
    "forcecheck-rule@1": "fb5533c8b918fdaf2e36ab6bc59aa7700676888e0f10f1a332510c3f7cda18d2",
    "forcecheck-axis@1": "ed9d4b60fc31f227cf39e4499c1d2d6bb781743b247b1a6abb9c2827846a6cbb",
    # the verifiers' conflict/limitation cues (scored pairs, policies), same rules
    "relation-cues@1": "1edd6c8e762c1d7fe44a88e9505dd0de0af9b008c1b0496ee067dc388930add6",
}

#: sha256 (first 16 hex) of every judgment (score, label, parsed) on the demo set, as
#: produced by the single-module implementation before the lists moved to data files.
DEMO_JUDGMENTS = {
    "citation-presence": "b8628dec585a6b31",
    "token-overlap": "caf2c72d5a1c6411",
    "entity-overlap": "b3b322fdf046b731",
    "forcecheck-rule": "96fef7b0cedcf481",
    "forcecheck-axis": "62fa3e44c9002670",
}


def test_released_lexicons_are_frozen_and_sourced() -> None:
    files = {p.stem: p for p in LEXICON_DIR.glob("*.toml")}
    assert set(files) == set(FROZEN_LEXICONS)
    for key, path in files.items():
        raw = path.read_bytes()
        assert hashlib.sha256(raw).hexdigest() == FROZEN_LEXICONS[key], (
            f"{path.name} changed: release it as a new version instead"
        )
        data = tomllib.loads(raw.decode())
        assert f"{data['id']}@{data['version']}" == key
        assert "written by this project" in " ".join(data["source"].lower().split())


@pytest.mark.parametrize("short", sorted(IDS))
def test_describe_records_each_lexicon_file_sha256(short: str) -> None:
    d = baseline(short).describe()
    expected = {
        "citation-presence": [],
        "token-overlap": ["tokens@1"],
        "entity-overlap": ["tokens@1"],
        "forcecheck-rule": ["tokens@1", "numbers@1", "forcecheck-rule@1"],
        "forcecheck-axis": ["tokens@1", "numbers@1", "forcecheck-rule@1", "forcecheck-axis@1"],
    }[short]
    assert list(d["lexicons"]) == expected
    for key, sha in d["lexicons"].items():
        assert sha == hashlib.sha256((LEXICON_DIR / f"{key}.toml").read_bytes()).hexdigest()


def test_lexicon_lists_are_what_the_judges_use() -> None:
    from assay.judges._baseline_lexicons import lexicon
    from assay.judges._baselines import STOPWORDS

    # The judges read the files: a term in the file is a term the judge fires on.
    assert "give rise to" not in lexicon("forcecheck-rule@1").data.patterns["causal"].terms
    causal = lexicon("forcecheck-rule@1").regex("causal")
    assert causal.search("smoking leads to cancer") and not causal.search("x gives rise to y")
    assert ForceCheckRuleJudge.cues("Smoking leads to cancer.")["causal"] == ["leads to"]
    assert frozenset(lexicon("tokens@1").words("stopwords")) == STOPWORDS


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'id = "x"\nversion = 1\nsource = "short"\n', "field 'source'"),
        (
            b'id = "x"\nversion = 1\nsource = "written by this project, 2026"\n'
            b'[patterns.a]\nterms = ["a"]\npattern = "b"\n',
            "field 'patterns.a'",
        ),
        (b'id = "y"\nversion = 1\nsource = "written by this project, 2026"\n', "declares y@1"),
        (b'id = "x"\nversion = 1\nsource = "written by this project, 2026"\nnope = 1\n', "nope"),
        (b"id = ", "lexicons/x@1.toml"),
    ],
)
def test_malformed_lexicon_is_one_line_naming_file_and_field(raw: bytes, message: str) -> None:
    from assay.errors import AssayError
    from assay.judges._baseline_lexicons import parse_lexicon

    with pytest.raises(AssayError) as exc:
        parse_lexicon("x@1", raw)
    text = str(exc.value)
    assert text.startswith("lexicons/x@1.toml: ") and message in text and "\n" not in text


def test_demo_judgments_identical_to_pre_split_implementation() -> None:
    pairs = _demo_pairs()
    for name, cls in BASELINES.items():
        h = hashlib.sha256()
        judge = cls()
        for pair in pairs:
            for claim in (pair.calibrated_claim, pair.raised_claim):
                j = judge.judge(JudgeItem(claim=claim, evidence=pair.evidence))
                row = json.dumps([j.score, j.label, j.parsed], sort_keys=True)
                h.update(row.encode() + b"\n")
        assert h.hexdigest()[:16] == DEMO_JUDGMENTS[name], name


def test_baselines_registered_by_name_are_the_classes_and_their_first_doc_lines() -> None:
    """`_baseline_names` registers the built-ins without importing them: each entry must
    load the class of that name, described by its docstring's first line, in order."""
    from assay.core.registry import JUDGES
    from assay.judges._baseline_names import BUILTIN_BASELINES

    assert list(BUILTIN_BASELINES) == list(BASELINES)
    for name, cls in BASELINES.items():
        assert JUDGES.get(f"baseline:{name}") is cls
        info = JUDGES.info(f"baseline:{name}")
        assert info.description == str(cls.__doc__).split("\n")[0]
        assert info.target == f"{cls.__module__}:{cls.__qualname__}"


def test_a_run_of_llm_judges_does_not_import_the_baselines(tmp_path: Path) -> None:
    """Their word lists are compiled only when a baseline is built."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from assay.core.registry import JUDGES\n"
        "from assay.runs.spec._blocks import BaselineSpec\n"
        "assert BaselineSpec(name='token-overlap') and 'llm' in JUDGES\n"
        "print('assay.judges._baselines' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "False"
