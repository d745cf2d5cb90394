"""Input types both front doors share, the HTTP API's schemas and the MCP tools' arguments:
text checked before it travels (`stackgraph.schema.text_problem`: no NUL, no lone surrogate,
no other control character), length caps on names, values and free text, and integers as
JSON means them. Each says in its JSON schema what it accepts, so the OpenAPI document
and the MCP tool schemas tell clients (and fuzzers) the truth.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StringConstraints,
    TypeAdapter,
    WithJsonSchema,
)

from stackgraph.schema import MAX_LABEL_CHARS, MAX_TEXT_CHARS, text_problem

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,252}$"
"""A service / datastore name as routes accept it."""


def safe_text(value: str) -> str:
    """Refuse text that may not travel (the message names the character and where)."""
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def time_text(value: object) -> object:
    """Times come as RFC 3339 text (Alertmanager's); a number is not one."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 time string")
    return _LAX_TIME.validate_python(value)


_LAX_TIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _whole(value: object) -> object:
    """JSON says `2.0` is an integer; strict pydantic would refuse it (a bool stays refused)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Whole = Annotated[int, BeforeValidator(_whole)]

SAFE_PATTERN = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"
"""What `safe_text` lets through, as the OpenAPI document says it (clients and fuzzers)."""


def _text_schema(max_chars: int, min_chars: int = 0) -> dict[str, Any]:
    return {"type": "string", "minLength": min_chars, "maxLength": max_chars,
            "pattern": SAFE_PATTERN}  # fmt: skip


_SAFE = AfterValidator(safe_text)
LabelName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL_CHARS), _SAFE,
                      WithJsonSchema(_text_schema(MAX_LABEL_CHARS, 1))]  # fmt: skip
ShortText = Annotated[str, StringConstraints(max_length=MAX_LABEL_CHARS), _SAFE,
                      WithJsonSchema(_text_schema(MAX_LABEL_CHARS))]  # fmt: skip
"""A label value, a receiver, a URL: at most MAX_LABEL_CHARS."""
Question = Annotated[str, StringConstraints(min_length=1, max_length=2000), _SAFE,
                     WithJsonSchema(_text_schema(2000, 1))]  # fmt: skip
"""A question to the incident memory."""
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS), _SAFE,
                 WithJsonSchema(_text_schema(MAX_TEXT_CHARS))]  # fmt: skip
"""Free text (an annotation, a question): newlines and tabs pass, other controls do not."""
MAX_LABELS = 100


def _map_schema(value_chars: int, min_items: int = 0) -> WithJsonSchema:
    """Said as `propertyNames` + `additionalProperties` (pydantic would say
    `patternProperties`, which leaves other names unconstrained)."""
    return WithJsonSchema({
        "type": "object", "propertyNames": _text_schema(MAX_LABEL_CHARS, 1),
        "additionalProperties": _text_schema(value_chars), "minProperties": min_items,
        "maxProperties": MAX_LABELS,
    })  # fmt: skip


Labels = Annotated[dict[LabelName, ShortText], Field(max_length=MAX_LABELS),
                   _map_schema(MAX_LABEL_CHARS)]  # fmt: skip
SomeLabels = Annotated[dict[LabelName, ShortText], Field(min_length=1, max_length=MAX_LABELS),
                       _map_schema(MAX_LABEL_CHARS, 1)]  # fmt: skip
Annotations = Annotated[dict[LabelName, Text], Field(max_length=MAX_LABELS),
                        _map_schema(MAX_TEXT_CHARS)]  # fmt: skip
Time = Annotated[datetime, BeforeValidator(time_text)]
ServiceName = Annotated[str, Field(pattern=NAME_PATTERN)]
"""A service, datastore or external API name."""
