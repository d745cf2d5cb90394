"""`POST /api/v1/tools/query_stack_graph`: the agent's graph tool over HTTP."""

from __future__ import annotations

import time

from fastapi import APIRouter

from stackgraph.rca.graph_query import GraphAnswer, query_stack_graph

from ..deps import Authed, ReaderDep
from ..schemas import GraphQuery
from .common import AUTH_RESPONSES, BODY

router = APIRouter(prefix="/api/v1/tools", tags=["tools"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip


@router.post("/query_stack_graph", responses=BODY)
def query_graph(body: GraphQuery, store: ReaderDep) -> GraphAnswer:
    """A service's neighbourhood, or the paths between two services, as sentences
    (`raw` adds the triples)."""
    return query_stack_graph(store, body.service, body.other, hops=body.hops, raw=body.raw,
                             limit=body.limit, now=time.time())  # fmt: skip
