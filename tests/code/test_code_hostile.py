"""Hostile source files (issue 17, rows 1, 2 and 12): a file that crashes or exhausts the
parser, or that holds a NUL in a route, is reported with its path and skipped; the rest of
the repository is written and the ingest process lives on."""

from __future__ import annotations

import os
from pathlib import Path

import codelane_repos as shop
import libcst as cst
import pytest

from stackgraph import cypher
from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.ingest.lanes.code import extract
from stackgraph.ingest.lanes.isolated import ChildFailed, Limits, run_isolated
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphStore

NESTED = "x = " + "(" * 2000 + "1" + ")" * 2000 + "\n"
"""10 KB, ~2,000 levels deep: libcst's native parser overflows its stack (LibCST #619)."""
BRACKETS = "[" * 200_000
TERMS = "x = " + " + ".join(["1"] * 100_000) + "\n"
"""400 KB, 100k terms: libcst needs hours (4,000 terms took 20 s)."""
GOOD = (
    'from fastapi import FastAPI\napp = FastAPI()\n\n@app.get("/items")\ndef items():\n    pass\n'
)
NUL_ROUTE = (
    'from fastapi import FastAPI\napp = FastAPI()\n\n@app.get("/a\x00b")\ndef h():\n    pass\n'
)


def _files() -> list[tuple[str, str]]:
    return [("cart/nested.py", NESTED), ("cart/main.py", GOOD), ("cart/brackets.py", BRACKETS),
            ("cart/terms.py", TERMS)]  # fmt: skip


def _endpoints(batch: RecordBatch) -> set[str]:
    return {n.key["route"] for n in batch.nodes if n.label == "Endpoint"}


def test_the_prescan_refuses_what_python_itself_refuses_for_nesting() -> None:
    batch = extract(_files(), "cart", repo="shop")
    assert _endpoints(batch) == {"/items"}
    reasons = {p.origin: p.message for p in batch.problems}
    assert reasons == {
        "shop:cart/nested.py": "line 1: too many nested parentheses; skipped",
        "shop:cart/brackets.py": "line 1: too many nested parentheses; skipped",
        "shop:cart/terms.py": "is nested too deeply for Python's own parser; skipped",
    }


def test_without_the_prescan_a_crashing_file_is_named_and_the_rest_analysed() -> None:
    """The child behind the pre-scan: libcst really segfaults (or overruns its CPU budget)
    on each of these, and each death names the file the child was on."""
    limits = Limits(cpu_s_per_item=2, prescan=False)
    batch = extract(_files(), "cart", repo="shop", limits=limits)
    assert _endpoints(batch) == {"/items"}
    reasons = {p.origin: p.message for p in batch.problems}
    assert set(reasons) == {"shop:cart/nested.py", "shop:cart/brackets.py", "shop:cart/terms.py"}
    assert reasons["shop:cart/nested.py"] == "skipped: crashed the parser (SIGSEGV)"
    assert reasons["shop:cart/brackets.py"] == "skipped: crashed the parser (SIGSEGV)"
    assert reasons["shop:cart/terms.py"] in {
        "skipped: took more than 2 s of CPU", "skipped: crashed the parser (SIGSEGV)"
    }  # fmt: skip


def test_a_child_overrunning_its_cpu_budget_is_stopped() -> None:
    with pytest.raises(ChildFailed) as caught:
        run_isolated(Limits(cpu_s_per_item=1), cst.parse_module, TERMS)
    assert caught.value.reason == "took more than 1 s of CPU"
    assert caught.value.index == -1


def test_a_crash_and_an_exception_in_the_child_are_failures_not_deaths() -> None:
    with pytest.raises(ChildFailed, match=r"crashed the parser \(SIGSEGV\)"):
        run_isolated(Limits(), cst.parse_module, BRACKETS)
    with pytest.raises(ChildFailed, match=r"crashed the parser \(SIGABRT\)"):
        run_isolated(Limits(), os.abort)
    with pytest.raises(ChildFailed, match="ParserSyntaxError"):
        run_isolated(Limits(), cst.parse_module, "def (")
    assert run_isolated(Limits(), len, "still serving") == 13


def test_a_nul_in_a_route_literal_loses_the_route_not_the_file() -> None:
    batch = extract([("cart/nul.py", NUL_ROUTE), ("cart/main.py", GOOD)], "cart", repo="shop")
    assert _endpoints(batch) == {"/items"}
    assert {n.key["path"] for n in batch.nodes if n.label == "CodeUnit"} == {
        "cart/main.py",
        "cart/nul.py",
    }
    assert not batch.problems


def test_the_lane_reports_hostile_files_and_writes_the_rest(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    root = tmp_path / "shop"
    files = {f"services/{p}": t for p, t in _files()}
    files["services/cart/nul.py"] = NUL_ROUTE
    shop.make_repo(root, {**shop.SHOP, **files})
    outside = tmp_path / "secret.py"
    outside.write_text('import httpx\nhttpx.get("http://payment/steal")\n')
    (root / "services/cart/leak.py").symlink_to(outside)
    report = run_ingest(settings, "code", repos=(root,), store=store,
                        options={"code_index": False})  # fmt: skip
    rejected = {r.origin.split(":")[1]: r.message for r in report.rejected}
    assert rejected["services/cart/nested.py"] == "line 1: too many nested parentheses; skipped"
    assert rejected["services/cart/terms.py"].startswith("is nested too deeply")
    assert rejected["services/cart/leak.py"] == "a symlink out of the repo; skipped"
    routes = {
        r["route"] for r in store.read(cypher.Query("MATCH (e:Endpoint) RETURN e.route AS route"))
    }
    assert {"/items", "/payments"} <= routes
    assert report.nodes["CodeUnit"].created >= 5
