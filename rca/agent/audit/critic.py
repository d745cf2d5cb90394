"""The stage critic: with a model configured, it picks which deterministic patch to try
first on a failing audit. It can only choose among the operators' names; the patch itself,
and whether it is kept, stay the machine's (a chosen patch that does not raise S is dropped
like any other)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
import ollama
import pydantic

from .checks import Audit
from .repair import RepairHint

log = logging.getLogger(__name__)

Critic = Callable[[Audit, Mapping[str, Sequence[str]]], list[RepairHint]]
"""(the first audit, stage -> patch names) -> the patches to try first."""

CRITIC_PROMPT = """You audit a root-cause investigation stage by stage: EP (evidence),
HS (hypotheses), AS (causal path), DR (diagnosis report). The audit below scored each stage
from 0 to 1 and names its problems. Choose the one patch most likely to fix the weakest
stage, from the patches listed for it, by calling choose_patch(stage, patch)."""
PICK = 1e-6
"""The gain a critic's pick is ranked with: after any remembered repair, before the rest."""


def model_critic(host: str, model: str, timeout_s: float) -> Critic:
    client = ollama.Client(host=host, timeout=timeout_s)

    def critic(first: Audit, menu: Mapping[str, Sequence[str]]) -> list[RepairHint]:
        names = sorted({p for ps in menu.values() for p in ps})
        spec = {"type": "function", "function": {
            "name": "choose_patch", "description": "The patch to try first.",
            "parameters": {"type": "object", "required": ["stage", "patch"], "properties": {
                "stage": {"type": "string", "enum": sorted(menu)},
                "patch": {"type": "string", "enum": names},
            }}}}  # fmt: skip
        doc = {"audit": first.as_dict(), "patches": {k: list(v) for k, v in menu.items()}}
        messages = [{"role": "system", "content": CRITIC_PROMPT},
                    {"role": "user", "content": json.dumps(doc)}]  # fmt: skip
        try:
            resp = client.chat(model=model, messages=messages, tools=[spec], stream=False)
        except (
            ollama.ResponseError,
            httpx.HTTPError,
            ConnectionError,
            pydantic.ValidationError,
        ) as exc:
            log.warning("stage critic unavailable: %s", exc)
            return []
        return [hint for call in resp.message.tool_calls or () if (hint := _pick(call, menu))]

    return critic


def _pick(call: Any, menu: Mapping[str, Sequence[str]]) -> RepairHint | None:
    args = call.function.arguments or {}
    stage, patch = str(args.get("stage", "")), str(args.get("patch", ""))
    return RepairHint(stage, patch, PICK) if patch in menu.get(stage, ()) else None
