"""`make screenshots`: the web UI's pages as PNGs, for the README.

Runs the demo into a fresh data dir (its own embedded FalkorDB), serves the API on it, logs
in with Debian's chromium (Playwright, the same launch as the browser tests) and saves the
incidents list, the demo incident, a service and the graph's health to stackgraph/web/screenshots/.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import load_settings

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "stackgraph" / "web" / "screenshots"


def main(argv: list[str]) -> int:
    """`screenshots.py [DATA_DIR]`: a data dir the demo already ran in skips the demo."""
    sys.path.insert(0, str(REPO / "tests"))
    from sgtest import chromium  # the browser tests' launch, written once

    with tempfile.TemporaryDirectory(prefix="sg-shots-") as tmp:
        data = Path(argv[0]) if argv else Path(tmp) / "data"
        env = {**os.environ, "STACKGRAPH_DATA_DIR": str(data)}
        if not argv:
            subprocess.run([sys.executable, "-m", "stackgraph", "demo"], env=env, check=True,
                           stdout=subprocess.DEVNULL)  # fmt: skip
        token = secrets.token_urlsafe(16)
        app = create_app(load_settings(None, data_dir=data), token=token)
        OUT.mkdir(parents=True, exist_ok=True)
        with serve_in_thread(app) as url, chromium(Path(tmp) / "profile") as context:
            page = context.new_page()
            page.goto(f"{url}/ui/")
            page.screenshot(path=str(OUT / "login.png"))
            page.fill("#token", token)
            page.click("form.login button")
            page.wait_for_load_state()
            page.screenshot(path=str(OUT / "incidents.png"), full_page=True)
            page.locator("table.incidents tbody a").first.click()
            page.wait_for_load_state()
            page.screenshot(path=str(OUT / "incident.png"), full_page=True)
            page.locator("svg.blame").screenshot(path=str(OUT / "blame-graph.png"))
            page.goto(f"{url}/ui/services/payment")
            page.screenshot(path=str(OUT / "service.png"), full_page=True)
            page.goto(f"{url}/ui/health")
            page.screenshot(path=str(OUT / "health.png"), full_page=True)
        subprocess.run([sys.executable, "-m", "stackgraph", "db", "stop"], env=env,
                       check=False, stdout=subprocess.DEVNULL)  # fmt: skip
    print(f"screenshots in {OUT.relative_to(REPO)}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
