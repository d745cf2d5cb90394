"""Investigations as verified, loop-free operator programs (after E4).

A program composes typed operators into a straight-line dataflow ending in one ranked
answer; the verifier checks it before anything runs, and the engine runs it with a cache
shared by later attempts on the same incident. The read path runs the `default`
playbook; others are shipped for kinds of alerts (`playbook_names()`), and the stages
(`stages`) pick, compose or (with a model) extend them.

    from stackgraph.rca.programs import DEFAULT_PROGRAM, parse, verify, BUILTIN
    program = verify(parse(open("mine.yaml").read()), BUILTIN)
    plan = investigate(store, alert, program=program)
"""

from .engine import CACHE_NODES, Engine, NodeCost, Run
from .library import BUILTIN
from .operators import Call, Context, Operator, Param
from .program import Binding, Program, ProgramError, parse, playbook, playbook_names
from .types import Answer, Scored
from .verifier import MAX_NODES, fusion_roles, problems, verify

DEFAULT_PROGRAM: Program = verify(playbook("default"), BUILTIN)
"""The read path's program: what `serve`, `investigate`, MCP and the replay run."""

__all__ = [
    "BUILTIN",
    "CACHE_NODES",
    "DEFAULT_PROGRAM",
    "MAX_NODES",
    "Answer",
    "Binding",
    "Call",
    "Context",
    "Engine",
    "NodeCost",
    "Operator",
    "Param",
    "Program",
    "ProgramError",
    "Run",
    "Scored",
    "fusion_roles",
    "parse",
    "playbook",
    "playbook_names",
    "problems",
    "verify",
]
