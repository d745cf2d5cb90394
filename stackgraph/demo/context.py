"""What every demo step shares: the settings, the example folder, the console, the store,
and what earlier steps left for later ones (`results`: the demo repo, the plan, the
incident)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from stackgraph.config import Settings
from stackgraph.store import GraphStore


@dataclass
class DemoContext:
    settings: Settings
    examples: Path
    console: Console
    store: GraphStore
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def alert_file(self) -> Path:
        """The example Alertmanager webhook both the plan and the incident start from."""
        return self.examples / "alerts" / "checkout-high-error-rate.json"

    @property
    def repo(self) -> Path:
        """The demo repo (`code` step): where it was built, else where it is built."""
        return Path(self.results.get("repo") or self.settings.data_dir / "demo" / "shop")


def print_rejected(ctx: DemoContext, report: Any) -> None:
    """A lane report's rejected records, one red line each."""
    for problem in report.rejected:
        ctx.console.print(f"[red]rejected[/red] {escape(str(problem))}")
