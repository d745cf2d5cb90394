"""What the agent says to the model: the system prompt, the plan as the first user turn,
the two control tools that end a run, and the nudges after a turn that did nothing."""

from __future__ import annotations

import json
from typing import Any

from stackgraph.rca.model import Alert, Plan

PLAN_HEADER = (
    "## Likely root causes (graph blame-propagation, before tools) — "
    "prioritised leads to confirm, not conclusions"
)

SYSTEM_PROMPT = """You are StackGraph's root-cause analyst for a Kubernetes platform.
An alert fired. You get a ranked plan of suspects from the platform graph. Verify suspects
with the tools: every verdict is computed from the tool's result, not from what you say.
When a tool has supported a suspect, call conclude(service, summary). If the checks do not
support any suspect, call insufficient_evidence(reason). Never invent tool output."""

CONTROL_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "conclude",
            "description": "Name the root cause. Accepted only if a tool's evidence supports it.",
            "parameters": {
                "type": "object",
                "properties": {
                    "service": {"type": "string", "description": "The root-cause service."},
                    "summary": {"type": "string", "description": "One paragraph."},
                    "evidence": {"type": "array", "items": {"type": "string"}},
                    "path": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "How the fault spread: the root cause first, the "
                        "alerted service last.",
                    },
                    "confidence": {"type": "number", "description": "0 to 1."},
                },
                "required": ["service", "summary"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "insufficient_evidence",
            "description": "End without a root cause: the checks do not support any suspect.",
            "parameters": {
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"],
            },
        },
    },
]

MALFORMED_REPLY = (
    "Your last reply was malformed: tool call arguments must be a JSON object. Try again."
)
NO_TOOL_CALL = (
    "Call a tool to check a suspect, conclude(service, summary) once a tool "
    "supports it, or insufficient_evidence(reason)."
)


def plan_prompt(alert: Alert, plan: Plan) -> str:
    """The user turn: the alert, then the plan verbatim under the leads header."""
    alert_doc = {"labels": dict(alert.labels), "annotations": dict(alert.annotations),
                 "starts_at": alert.starts_at, "fingerprint": alert.fingerprint}  # fmt: skip
    return (
        f"## Alert\n{json.dumps(alert_doc, indent=1, sort_keys=True)}\n\n{PLAN_HEADER}\n"
        f"{json.dumps(plan.to_dict(), indent=1, default=str)}\n"
    )
