"""StackGraph: a persistent property-graph world-model of a Kubernetes platform for RCA."""

__version__ = "0.1.0"
