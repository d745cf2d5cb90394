"""The HTTP API (`stackgraph serve`): Alertmanager webhook, incidents, tools, health."""

from .app import create_app
from .service import IncidentService, QueueFull

__all__ = ["IncidentService", "QueueFull", "create_app"]
