"""`assay.apply_policies`: the Python entry point writes what `assay policies apply`
writes, returns what each policy wrote, and raises (writing nothing) on bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _policies_cli_helpers import DETERMINISTIC, POLICY, RUN_SPEC, make_run, write_text
from _policies_cli_helpers import assay as cli

import assay
from assay.errors import SpecError


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("api"), RUN_SPEC)


def test_python_apply_writes_the_same_bytes_as_the_cli(run_dir: Path, tmp_path: Path) -> None:
    policy = write_text(tmp_path / "policies.toml", POLICY)
    by_cli = tmp_path / "cli"
    shutil.copytree(run_dir, by_cli)
    code, _, err = cli("policies", "apply", by_cli, "--policy", policy)
    assert code == 0, err

    by_api = tmp_path / "api"
    shutil.copytree(run_dir, by_api)
    applied = assay.apply_policies(by_api, policy)

    assert [a.name for a in applied] == ["cert", "render"]
    for one in applied:
        assert one.folder == by_api / "policies" / one.name
        written = json.loads((one.folder / "metrics.json").read_text(encoding="utf-8"))
        assert one.ratios, "the headline metrics the CLI prints"
        assert one.responses == 8
        assert one.kind in {"claim_selective", "fail_closed"}
        assert written == json.loads(json.dumps(one.metrics))
        for name in DETERMINISTIC:
            cli_file = by_cli / "policies" / one.name / name
            assert (one.folder / name).read_bytes() == cli_file.read_bytes(), name


def test_python_apply_of_one_name_on_a_split_and_a_bad_name(run_dir: Path, tmp_path: Path) -> None:
    policy = write_text(tmp_path / "policies.toml", POLICY)
    target = tmp_path / "run"
    shutil.copytree(run_dir, target)
    applied = assay.apply_policies(target, policy, name="render", resamples=50)
    assert [a.name for a in applied] == ["render"]
    assert not (target / "policies" / "cert").exists()
    with pytest.raises(SpecError, match="split"):
        assay.apply_policies(target, policy, split="holdout")
    with pytest.raises(SpecError):
        assay.apply_policies(target, policy, name="nope")
    assert sorted(p.name for p in (target / "policies").iterdir()) == ["render"]
