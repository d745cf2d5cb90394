"""The stages a model takes part in (with `OLLAMA_HOST`): stage 2, the model writes a
program; stage 3, it writes a new operator. Whatever it writes goes through the same gates
as anything else (the verifier; the AST gate and the replay admission), and what it gets
wrong goes back to it: at most REPAIRS times, then the machine's own stage is used.

Both talk to Ollama's /api/chat with `format: json`; a model that cannot be reached or
answers nonsense leaves the deterministic stage in charge, never a failed investigation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import ollama
import pydantic

from ..model import Alert
from .operators import Operator
from .program import Program, ProgramError, parse, playbook
from .stages import Attempt, excluding
from .verifier import verify

__all__ = ["REPAIRS", "ModelClient", "Refused", "compose_with_model"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Refused(ValueError):
    """What a gate said of the model's answer; `reasons` go back to the model."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(reasons))


REPAIRS = 2
"""Refusals sent back to the model before its stage gives up."""

COMPOSE_PROMPT = """You compose root-cause investigation programs from a fixed library of
typed operators. A program is JSON: {"program": NAME, "bindings": [{"name", "op", "args",
"params"}, ...]}: a straight-line list of named bindings, each argument an earlier binding's
name, ending in exactly one `fuse` binding (the ranked answer). Use only the operators
listed, with arguments of the types their signatures state; every binding must be consumed.
The leads listed as refuted were checked and are not the root cause: weigh the evidence
differently than the program that proposed them. Answer with the JSON program only."""


@dataclass(frozen=True)
class ModelClient:
    """A chat model at `host` asked for JSON answers."""

    host: str
    model: str
    timeout_s: float = 60.0

    def ask(self, messages: list[dict[str, str]]) -> str | None:
        """The model's answer text, or None when it cannot be reached or fails."""
        client = ollama.Client(host=self.host, timeout=self.timeout_s)
        try:
            resp = client.chat(model=self.model, messages=messages, format="json", stream=False)
        except (ollama.ResponseError, httpx.HTTPError, ConnectionError,
                pydantic.ValidationError) as exc:  # fmt: skip
            log.warning("model at %s unavailable: %s", self.host, exc)
            return None
        return str(resp.message.content or "")

    def until_accepted(
        self, messages: list[dict[str, str]], accept: Callable[[str], T], what: str
    ) -> tuple[T | None, int, list[str]]:
        """Ask; `accept` turns the answer into a value or raises Refused, whose reasons go
        back to the model, at most REPAIRS times: (the value or None, repairs, what was
        said on the way)."""
        said: list[str] = []
        for attempt in range(REPAIRS + 1):
            text = self.ask(messages)
            if text is None:
                said.append("the model could not be reached")
                return None, attempt, said
            try:
                return accept(text), attempt, said
            except Refused as exc:
                said.append(f"refused: {exc}")
                messages = [*messages, {"role": "assistant", "content": text},
                            {"role": "user", "content": f"Refused: {exc}. Send the corrected "
                             f"{what}."}]  # fmt: skip
        said.append(f"no {what} passed after {REPAIRS} repairs")
        return None, REPAIRS, said


def library_doc(library: Mapping[str, Operator]) -> list[dict[str, Any]]:
    return [op.describe() for op in library.values()]


def compose_with_model(
    client: ModelClient,
    library: Mapping[str, Operator],
    alert: Alert,
    refuted: Iterable[str],
    tried: Iterable[Program] = (),
) -> tuple[Attempt | None, list[str]]:
    """Stage 2 by the model: (the attempt, or None; what happened on the way: each
    refusal sent back, or why the model's stage gave up)."""
    refuted = sorted(set(refuted))
    doc = {
        "alert": {"labels": dict(alert.labels), "annotations": dict(alert.annotations)},
        "refuted_leads": refuted,
        "tried_programs": [p.to_dict() for p in tried],
        "operators": library_doc(library),
        "example": playbook("default").to_dict(),
    }
    messages = [{"role": "system", "content": COMPOSE_PROMPT},
                {"role": "user", "content": json.dumps(doc)}]  # fmt: skip

    def accept(text: str) -> Program:
        try:
            return verify(parse(text, origin="composed"), library)
        except ProgramError as exc:
            raise Refused([f"the verifier: {p}" for p in exc.problems]) from exc

    program, repairs, said = client.until_accepted(messages, accept, "program")
    if program is None:
        return None, said
    how = f"written by the model ({repairs} repair(s))"
    return Attempt(2, excluding(program, refuted), how), said
