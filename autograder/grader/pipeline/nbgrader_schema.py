"""nbgrader's cell-metadata check, with nbgrader's own schema checked once per process.

nbgrader validates every graded cell's metadata with ``jsonschema.validate``, which first
checks the *schema* against JSON Schema's metaschema, on every call: 0.7 ms of a 0.74 ms
call. Autograding a submission validates each of its notebooks several times (30 calls
for lesson 01), so that check of a constant schema cost about 20 ms per submission.
``install`` has nbgrader's metadata validators use a validator compiled once per schema,
which reports the same errors, raised the same way (the best match, as
``jsonschema.validate`` picks it).
"""

from __future__ import annotations

import functools
import json
import types

import jsonschema
from jsonschema.exceptions import best_match


@functools.lru_cache(maxsize=8)
def _compiled(schema_text: str):
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(instance, schema, *args, **kwargs) -> None:
    """``jsonschema.validate``, the schema checked and compiled once (keyed by its text)."""
    if args or kwargs:
        return jsonschema.validate(instance, schema, *args, **kwargs)
    error = best_match(_compiled(json.dumps(schema, sort_keys=True)).iter_errors(instance))
    if error is not None:
        raise error
    return None


def install() -> None:
    """Have nbgrader's metadata validators (``nbgraderformat.common``) call ``validate``."""
    from nbgrader.nbgraderformat import common

    common.jsonschema = types.SimpleNamespace(validate=validate)
