"""The incident web UI under /ui (server-rendered, no script) and the view models it shares
with the JSON API. `stackgraph.web.routes.router` is mounted by `create_app`."""

from .blame_graph import BlameEdge, BlameGraph, BlameNode, blame_graph, graph_for

__all__ = ["BlameEdge", "BlameGraph", "BlameNode", "blame_graph", "graph_for"]
