"""The vocabulary as data: labels, keys, edge types, provenance enums and indexes."""

from .chunks import CodeChunk
from .model import (
    INTERNAL_PREFIX,
    PROVENANCE_FIELDS,
    VOLATILE_FIELDS,
    EdgeSpec,
    LabelSpec,
    Source,
    Status,
)
from .records import EdgeRecord, NodeRecord, NodeRef, RecordBatch, Rejection
from .text import (
    MAX_KEY_CHARS,
    MAX_LABEL_CHARS,
    MAX_PROPERTY_CHARS,
    MAX_TEXT_CHARS,
    text_problem,
)
from .validate import check_ref, check_value, validate_edge, validate_node
from .vocabulary import (
    CRITICALITY,
    EDGES,
    HYPOTHESIS_STATES,
    LABELS,
    MEMORY_ENTITY_TYPES,
    VERDICTS,
)

__all__ = [
    "CRITICALITY",
    "EDGES",
    "HYPOTHESIS_STATES",
    "INTERNAL_PREFIX",
    "LABELS",
    "MAX_KEY_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_PROPERTY_CHARS",
    "MAX_TEXT_CHARS",
    "MEMORY_ENTITY_TYPES",
    "PROVENANCE_FIELDS",
    "VERDICTS",
    "VOLATILE_FIELDS",
    "CodeChunk",
    "EdgeRecord",
    "EdgeSpec",
    "LabelSpec",
    "NodeRecord",
    "NodeRef",
    "RecordBatch",
    "Rejection",
    "Source",
    "Status",
    "check_ref",
    "check_value",
    "text_problem",
    "validate_edge",
    "validate_node",
]
