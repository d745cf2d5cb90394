"""Hostile span files: a link out of the span folder is not read, and JSON nested deeper
than Python parses is one clear error, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackgraph.errors import InputError
from stackgraph.ingest.lanes.telemetry import load_spans


def test_a_link_out_of_the_span_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "spans"
    folder.mkdir()
    secret = tmp_path / "secret.json"
    secret.write_text('{"data": []}')
    (folder / "leak.json").symlink_to(secret)
    with pytest.raises(InputError, match=r"leak.json is a symlink out of .*spans; not read"):
        load_spans(folder)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"data": []}\n' + "[" * 100_000])
def test_json_nested_too_deep_is_an_input_error(tmp_path: Path, text: str) -> None:
    spans = tmp_path / "deep.json"
    spans.write_text(text)
    with pytest.raises(InputError, match="is nested deeper than JSON is read"):
        load_spans(spans)
