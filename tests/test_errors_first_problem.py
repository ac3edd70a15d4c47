"""`assay.errors.first_problem`: the one place a pydantic ValidationError becomes the
(field, message) of a one-line error, for every layer (core included)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from assay.errors import first_problem


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")

    page: int


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    pairs: list[Inner] = []

    @model_validator(mode="after")
    def _named(self) -> Block:
        if self.name == "bad":
            raise ValueError("name must not be 'bad'")
        return self


def _error(data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Block.model_validate(data)
    return caught.value


def test_an_unknown_key_is_reported_before_the_missing_field_it_explains() -> None:
    exc = _error({"nmae": "x"})  # pydantic lists "name missing" first
    assert [e["type"] for e in exc.errors()] == ["missing", "extra_forbidden"]
    typo = first_problem(exc)
    assert (typo.field, typo.type, typo.message) == ("nmae", "extra_forbidden", typo.msg)
    own = first_problem(exc, typo_first=False)
    assert (own.field, own.type) == ("name", "missing")


def test_the_location_is_dotted_and_kept() -> None:
    problem = first_problem(_error({"name": "x", "pairs": [{"page": 1}, {"page": "two"}]}))
    assert problem.field == "pairs.1.page"
    assert problem.loc == ("pairs", 1, "page")
    assert problem.msg == problem.message  # no "Value error, " prefix to strip
    assert problem.msg.startswith("Input should be a valid integer")


def test_a_validator_message_loses_its_prefix_and_a_model_error_names_no_field() -> None:
    problem = first_problem(_error({"name": "bad"}))
    assert problem.msg == "Value error, name must not be 'bad'"
    assert problem.message == "name must not be 'bad'"
    assert problem.field is None and problem.loc == ()
