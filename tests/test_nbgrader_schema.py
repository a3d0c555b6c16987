"""nbgrader's metadata check with its schema compiled once says what nbgrader's own says."""

from __future__ import annotations

import jsonschema
import nbformat
import pytest
from nbgrader.nbgraderformat import common
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

from autograder.grader.pipeline import nbgrader_schema

GOOD = {"grade": True, "solution": False, "locked": True, "grade_id": "t1", "points": 2}
BAD = [
    {**GOOD, "points": "two"},
    {**GOOD, "grade": "yes"},
    {key: value for key, value in GOOD.items() if key != "locked"},
]


def _cell(meta: dict):
    cell = nbformat.v4.new_code_cell("assert True")
    cell.metadata["nbgrader"] = {**meta, "schema_version": 3}
    return cell


def _error(check, cell) -> str | None:
    try:
        check(cell)
    except jsonschema.ValidationError as error:
        return f"{list(error.absolute_path)}: {error.message}"
    return None


@pytest.mark.parametrize("meta", [GOOD, *BAD])
def test_the_compiled_check_gives_nbgraders_verdict_and_message(meta, monkeypatch):
    plain = _error(MetadataValidatorV3().validate_cell, _cell(meta))
    monkeypatch.setattr(common, "jsonschema", common.jsonschema)  # restored after the test
    nbgrader_schema.install()
    assert common.jsonschema.validate is nbgrader_schema.validate
    assert _error(MetadataValidatorV3().validate_cell, _cell(meta)) == plain
    assert (plain is None) == (meta is GOOD)


def test_the_schema_is_checked_once_however_many_cells(monkeypatch):
    monkeypatch.setattr(common, "jsonschema", common.jsonschema)
    nbgrader_schema.install()
    nbgrader_schema._compiled.cache_clear()
    validator = MetadataValidatorV3()
    for _ in range(20):
        validator.validate_cell(_cell(GOOD))
    assert nbgrader_schema._compiled.cache_info().misses == 1


def test_a_broken_schema_is_still_refused():
    with pytest.raises(jsonschema.SchemaError):
        nbgrader_schema.validate({}, {"type": 12})
