"""The agent: verifies the plan's candidates with read-only tools; the machine decides."""

from .calibration import Calibrated, OutcomeHistory
from .catalog import DEFAULT_SUGGESTED, default_tools, floor_args, suggestion_problem, tool_status
from .evidence import ROOT_CAUSE_MIN_CONFIDENCE, Hypothesis, HypothesisState, ToolEvidence, Verdict
from .loop import Agent, AgentConfig
from .parse import ToolCall, calls_in_text
from .prompts import PLAN_HEADER, plan_prompt
from .report import Action, Report, build_report
from .run import AgentRun, Ending
from .sink import EvidenceRejected, EvidenceSink
from .toolbox import (
    Prerequisite,
    PrerequisiteStatus,
    Tool,
    ToolContext,
    ToolResult,
    ToolStatus,
    call_tool,
)

__all__ = [
    "DEFAULT_SUGGESTED",
    "PLAN_HEADER",
    "ROOT_CAUSE_MIN_CONFIDENCE",
    "Action",
    "Agent",
    "AgentConfig",
    "AgentRun",
    "Calibrated",
    "Ending",
    "EvidenceRejected",
    "EvidenceSink",
    "Hypothesis",
    "HypothesisState",
    "OutcomeHistory",
    "Prerequisite",
    "PrerequisiteStatus",
    "Report",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolEvidence",
    "ToolResult",
    "ToolStatus",
    "Verdict",
    "build_report",
    "call_tool",
    "calls_in_text",
    "default_tools",
    "floor_args",
    "plan_prompt",
    "suggestion_problem",
    "tool_status",
]
