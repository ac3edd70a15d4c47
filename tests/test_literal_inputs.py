"""Inputs that must not be taken literally.

Blank paths are refused on every path-valued CLI parameter; files saved with a UTF-8
byte-order mark read as without one; `;`-, tab- and `|`-separated "CSV" is detected (or
an explicit `delimiter` that does not fit is refused naming the one that does), and the
delimiter a run read with is in its manifest. The error-line cases are in
tests/test_error_battery.py (`LITERAL_INPUT_CASES`).
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
import typer
from _cli import invoke

from assay.cli import app
from assay.cli._paths import cli_path, cli_path_text
from assay.datasets import load_items, load_pairs, scan_pairs
from assay.datasets._items import ItemsDatasetOptions
from assay.errors import DatasetError
from assay.prompts import PromptRegistry
from assay.runs import load_spec

BOM = b"\xef\xbb\xbf"
DEMO = Path(__file__).resolve().parent.parent / "examples"
CLAIMS = "id,response,context,label\nc1,A causes B.,A was linked to B.,supported\n"
PAIRS_HEADER = "id,evidence,calibrated_claim,raised_claim,axis,severity\n"
PAIR_ROW = "p1,X was linked to Y.,X is associated with Y.,X causes Y.,relation,2\n"


def _path_parameters(group: typer.Typer, prefix: str = "") -> list[tuple[str, str, Any]]:
    """(command, parameter, its typer ParameterInfo) for every parameter typed Path."""
    out = []
    for command in group.registered_commands:
        name = command.name or (command.callback.__name__ if command.callback else "?")
        hints = typing.get_type_hints(command.callback, include_extras=True)
        for param, hint in hints.items():
            if "Path" in str(hint) or (name == "validate" and param == "dataset"):
                info = next(m for m in typing.get_args(hint)[1:] if hasattr(m, "parser"))
                out.append((f"{prefix}{name}", param, info))
    for sub in group.registered_groups:
        assert sub.typer_instance is not None
        out += _path_parameters(sub.typer_instance, f"{prefix}{sub.name} ")
    return out


def test_every_path_parameter_refuses_a_blank_value() -> None:
    found = _path_parameters(app)
    assert len(found) >= 25  # run, report, compare, cache, prompts, policies ...
    unchecked = [f"{c} {p}" for c, p, info in found if info.parser not in (cli_path, cli_path_text)]
    assert not unchecked, f"path parameters that take '' as the current directory: {unchecked}"


@pytest.mark.parametrize("value", ["", " ", "\t"])
def test_cli_path_refuses_blank_and_keeps_the_rest(value: str) -> None:
    with pytest.raises(typer.BadParameter, match="empty or only whitespace"):
        cli_path(value)
    assert cli_path(".") == Path(".") and cli_path(" a ") == Path(" a ")


def test_output_dir_empty_writes_nothing_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(["run", str(DEMO / "demo.toml"), "--output-dir", "", "--no-progress"])
    assert code == 2 and "--output-dir" in err
    assert list(tmp_path.iterdir()) == []


def test_a_spec_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    out = f'"{tmp_path / "o"}"'.encode()
    spec = tmp_path / "bom.toml"
    spec.write_bytes(BOM + (DEMO / "demo.toml").read_bytes().replace(b'"runs/demo"', out))
    loaded = load_spec(spec)
    assert loaded.spec.name == "demo" and loaded.spec.output_dir == str(tmp_path / "o")
    code, out, err = invoke(["validate", str(spec)])
    assert code == 0, err
    assert out.strip().endswith("spec ok")


def test_prompt_policy_and_data_files_with_a_byte_order_mark(tmp_path: Path) -> None:
    source = PromptRegistry([]).get("force-aware@1")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "mine.prompt").write_bytes(
        BOM + Path(source.path).read_bytes().replace(b'id = "force-aware"', b'id = "mine"')
    )
    assert PromptRegistry([tmp_path / "p"]).get("mine@1").meta.variables
    data = tmp_path / "row.json"
    data.write_bytes(BOM + json.dumps({"evidence": "E.", "claim": "C."}).encode())
    argv = ["prompts", "render", "mine@1", "--data", str(data), "--prompt-dir", str(tmp_path / "p")]
    code, out, err = invoke(argv)
    assert code == 0, err
    assert "E." in out
    from assay.policies.engine._spec import load_policy_file

    policy = tmp_path / "policy.toml"
    policy.write_bytes(BOM + b'[[policies]]\nname = "fc"\nkind = "fail_closed"\n')
    assert [p.name for p in load_policy_file(policy)] == ["fc"]


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_items_csv_delimiter_is_detected(tmp_path: Path, sep: str) -> None:
    path = tmp_path / "claims.csv"
    path.write_text(CLAIMS.replace(",", sep) + f'c2{sep}"B, C; and D."{sep}E{sep}unsupported\n')
    dataset = load_items(ItemsDatasetOptions(path=str(path), gold_label_column="label"))
    assert dataset.delimiter == sep
    assert [i.gold_label for i in dataset.items] == ["supported", "unsupported"]
    assert dataset.items[1].variables["response"] == "B, C; and D."


def test_comma_csv_with_semicolons_in_its_text_stays_comma(tmp_path: Path) -> None:
    path = tmp_path / "claims.csv"
    path.write_text(CLAIMS + 'c2,"a; b; c; d",x;y;z,unsupported\n')
    dataset = load_items(ItemsDatasetOptions(path=str(path), gold_label_column="label"))
    assert dataset.delimiter == ","
    assert dataset.items[1].variables["response"] == "a; b; c; d"


def test_one_column_csv_is_comma(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("id\na\nb\n")
    assert [i.id for i in load_items(str(path)).items] == ["a", "b"]


def test_tsv_files_are_tab_separated(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text((PAIRS_HEADER + PAIR_ROW).replace(",", "\t"))
    assert load_pairs(path).pairs[0].raised_claim == "X causes Y."
    assert scan_pairs(path).delimiter == "\t"


def test_forcebench_csv_semicolons_detected_and_explicit_mismatch_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text((PAIRS_HEADER + PAIR_ROW).replace(",", ";"))
    assert load_pairs(path).pairs[0].axis.value == "relation"
    assert load_pairs(path, delimiter=";").delimiter == ";"
    with pytest.raises(DatasetError, match="looks ';'-separated; set delimiter = ';'"):
        scan_pairs(path, delimiter=",")
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text("{}\n")
    with pytest.raises(DatasetError, match="applies to .csv and .tsv files only"):
        scan_pairs(jsonl, delimiter=";")


def test_the_manifest_records_the_delimiter(tmp_path: Path) -> None:
    (tmp_path / "claims.csv").write_text(CLAIMS.replace(",", ";"))
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "t"\noutput_dir = "{tmp_path / "out"}"\nbootstrap = 0\n'
        '[[datasets]]\nkind = "items"\npath = "claims.csv"\ngold_label_column = "label"\n'
        'variables = { claim = "response", evidence = "context" }\n'
        '[[baselines]]\nname = "token-overlap"\n'
    )
    code, _, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["datasets"][0]["delimiter"] == ";"
    assert "delimiter" not in json.dumps(manifest["spec"])  # detected, not given


@pytest.mark.parametrize("argument", ["output_dir", "cache_dir"])
def test_the_python_api_refuses_a_blank_path_as_an_assay_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str
) -> None:
    import assay
    from assay.errors import AssayError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssayError, match=f"'{argument}'.*empty or only whitespace"):
        assay.run(DEMO / "demo.toml", **{argument: " "})
    assert list(tmp_path.iterdir()) == []


def test_path_fields_take_a_path_object_as_its_text(tmp_path: Path) -> None:
    """Python callers pass `pathlib.Path`s to options and spec fields without `str()`."""
    from assay.runs import RunOptions
    from assay.runs.spec._spec import DatasetSpec

    options = RunOptions(output_dir=tmp_path / "run", cache_dir=tmp_path / "cache")
    assert options.output_dir == str(tmp_path / "run")
    assert options.cache_dir == str(tmp_path / "cache")
    assert DatasetSpec(path=DEMO / "x.csv").path == str(DEMO / "x.csv")
    with pytest.raises(ValueError, match="empty or only whitespace"):
        RunOptions(output_dir=" ")
