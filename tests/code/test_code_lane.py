"""The code lane end to end: real Git repos, the session FalkorDB, Qdrant local mode."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import codelane_repos as shop
import pytest
from ollama_server import ollama_server

from stackgraph import cypher
from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.dump import export_lines
from stackgraph.errors import ConfigError, InputError
from stackgraph.ingest.lanes.code.source import _remote
from stackgraph.memory.code_index import CodeIndex, CodeIndexError, local_path
from stackgraph.memory.code_search import code_refs, search_code
from stackgraph.memory.embedding import OllamaEmbedder
from stackgraph.store import GraphStore


def _ingest(settings: Settings, store: GraphStore, repos: tuple[Path, ...] = ()) -> Any:
    reports: list[Any] = []
    report = run_ingest(settings, "code", repos=repos, store=store,
                        options={"on_index": lambda _n, r: reports.append(r)})  # fmt: skip
    report.index = reports
    return report


def _raw(store: GraphStore, label: str) -> dict[str, dict[str, Any]]:
    rows = store.read(cypher.render("export_nodes", label=label), {"after": -1, "limit": 1000})
    return {json.dumps(r["p"].get("path") or r["p"].get("route")): r["p"] for r in rows}


def test_ingest_twice_changes_nothing_but_the_clocks(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    shop.make_repo(tmp_path / "shop")
    first = _ingest(settings, store, (tmp_path / "shop",))
    assert [str(r) for r in first.rejected] == [
        "CodeUnit{repo='shop', path='services/checkout/app/broken.py'} "
        "[shop:services/checkout/app/broken.py:1:10]: source: does not parse: invalid syntax"
    ]
    assert first.nodes["CodeUnit"].created == 5 and first.index[0].embedded > 0
    export1 = export_lines(store)
    before = _raw(store, "CodeUnit")
    second = _ingest(settings, store, (tmp_path / "shop",))
    assert second.index[0].embedded == 0 and second.index[0].deleted == 0
    assert second.index[0].unchanged == first.index[0].embedded
    for counts in (*second.nodes.values(), *second.edges.values()):
        assert counts.created == 0 and counts.updated == 0
    assert export_lines(store) == export1
    after = _raw(store, "CodeUnit")
    for key, props in after.items():
        assert props["first_seen"] == before[key]["first_seen"]
        assert props["last_seen"] > before[key]["last_seen"]


def test_search_finds_handler_by_meaning_and_refs_go_back_to_code(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    shop.make_repo(tmp_path / "shop")
    _ingest(settings, store, (tmp_path / "shop",))
    with CodeIndex.open(settings) as index:
        hits = search_code(index, store, "charge the customer's credit card", limit=5)
        receipt = search_code(index, store, "format a receipt for the confirmation email", 3)
    assert (hits[0]["symbol"], hits[0]["service"]) == ("create_payment", "payment")
    assert hits[0]["path"] == "services/payment/app/main.py" and hits[0]["in_graph"]
    assert hits[0]["score"] > hits[1]["score"]
    assert (receipt[0]["symbol"], receipt[0]["service"]) == ("render_receipt", "checkout")
    refs = {r["path"]: r for r in code_refs(store, "checkout")}
    orders = refs["services/checkout/app/routers/orders.py"]
    assert orders["endpoints"] == ["POST /api/orders"]
    assert orders["publishes"] == ["orders.created"] and orders["calls"] == ["payment"]
    assert code_refs(store, "nope") == []


def test_changed_and_removed_code_is_reembedded_and_deleted(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    repo = shop.make_repo(tmp_path / "shop")
    _ingest(settings, store, (tmp_path / "shop",))
    orders = shop.CHECKOUT_ORDERS.replace("plain-text receipt", "short receipt")
    orders = orders.replace("    return {}\n", '    return {"ok": True}\n')
    cut = orders.index("\n\ndef render_receipt")
    shop.commit(repo, {"services/checkout/app/routers/orders.py": orders[:cut] + "\n"}, "edit")
    report = _ingest(settings, store, (tmp_path / "shop",))
    assert (report.index[0].embedded, report.index[0].deleted) == (1, 1)  # place_order; receipt
    assert report.nodes["CodeUnit"].updated == 1  # its embedding_ref lost one id
    with CodeIndex.open(settings) as index:
        assert "render_receipt" not in {h.symbol for h in index.search("receipt", limit=50)}


@pytest.fixture
def ollama() -> Iterator[str]:
    with ollama_server(dim=1024) as fake:
        yield fake.url


def test_dimension_mismatch_is_refused_at_start_and_nothing_is_lost(
    tmp_path: Path, settings: Settings, store: GraphStore, ollama: str
) -> None:
    shop.make_repo(tmp_path / "shop")
    _ingest(settings, store, (tmp_path / "shop",))
    with CodeIndex.open(settings) as index:
        stored = index.count()
    big = OllamaEmbedder(ollama, model="bge-m3")
    assert big.dim == 1024
    with pytest.raises(ConfigError) as err:
        CodeIndex.open(settings, embedder=big)
    msg = str(err.value)
    assert "384-d" in msg and "1024-d" in msg and "all-minilm-l6-v2" in msg
    assert "ollama:bge-m3" in msg and f"{settings.graph}_code" in msg
    # the lane refuses before reading any repo, and the stored vectors are untouched
    with_ollama = settings.model_copy(update={"ollama_host": ollama})
    with pytest.raises(ConfigError, match="1024-d"):
        run_ingest(with_ollama, "code", repos=(tmp_path / "missing",), store=store)
    with CodeIndex.open(settings) as index:
        assert index.count() == stored
    assert local_path(settings).is_dir()


def test_url_repo_is_cloned_shallow_then_fetched(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    origin = shop.make_repo(tmp_path / "origin")
    shop.commit(origin, {"services/cart/app.py": "import redis\nr = redis.Redis(host='c')\n"},
                "second")  # fmt: skip
    spec = {"url": f"file://{tmp_path / 'origin'}", "branch": "main",
            "services": ["payment", "cart"]}  # fmt: skip
    cfg = settings.model_copy(
        update={"repos": [Settings.model_validate({"repos": [spec]}).repos[0]]}
    )
    _ingest(cfg, store)
    clones = list((settings.data_dir / "repos").iterdir())
    assert [c.name[: len("origin-")] for c in clones] == ["origin-"]
    assert (clones[0] / ".git" / "shallow").is_file()
    paths = {k.strip('"') for k in _raw(store, "CodeUnit")}
    assert paths == {"services/payment/app/main.py", "services/cart/app.py"}
    shop.commit(origin, {"services/cart/api.py": "import httpx\nhttpx.get('http://payment/x')\n"},
                "third")  # fmt: skip
    _ingest(cfg, store)
    assert "services/cart/api.py" in {k.strip('"') for k in _raw(store, "CodeUnit")}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_credentials_never_appear_in_errors_or_git_config(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    url = f"https://bob:pw-SECRET-1@127.0.0.1:{_closed_port()}/shop.git"
    cfg = settings.model_copy(update={
        "repos": [Settings.model_validate({"repos": [{"url": url}]}).repos[0]],
        "git_token": Settings.model_validate({"git_token": "tok-SECRET-2"}).git_token,
    })  # fmt: skip
    with pytest.raises(InputError) as err:
        _ingest(cfg, store)
    msg = str(err.value)
    assert "SECRET" not in msg and "cannot clone repo https://***@127.0.0.1" in msg
    assert "pw-SECRET" not in repr(cfg) and "tok-SECRET" not in repr(cfg)
    remote = _remote(url, cfg)
    assert "SECRET" not in remote.url and remote.url.startswith("https://127.0.0.1:")
    assert remote.env["GIT_CONFIG_KEY_0"] == "http.extraHeader"


def test_config_maps_paths_to_services_and_unknown_paths_fail_clearly(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    shop.make_repo(tmp_path / "shop")
    spec = {"path": str(tmp_path / "shop"), "services": {"services/checkout": "orders"}}
    cfg = settings.model_copy(update={"repos": Settings.model_validate({"repos": [spec]}).repos})
    _ingest(cfg, store, (tmp_path / "shop",))  # --repo PATH uses the config's entry for it
    services = {json.loads(k) for k in _raw(store, "CodeUnit")}
    assert services == {"services/checkout/app/main.py", "services/checkout/app/routers/orders.py"}
    assert code_refs(store, "orders") and not code_refs(store, "checkout")
    with pytest.raises(InputError, match="is not a directory"):
        _ingest(settings, store, (tmp_path / "nowhere",))


def test_unreachable_server_and_busy_local_folder_are_clear_errors(settings: Settings) -> None:
    remote = settings.model_copy(update={"qdrant_url": f"http://127.0.0.1:{_closed_port()}"})
    with pytest.raises(CodeIndexError, match=r"Qdrant at http://127\.0\.0\.1:\d+: opening"):
        CodeIndex.open(remote)
    with CodeIndex.open(settings), pytest.raises(CodeIndexError, match="in use by another"):
        CodeIndex.open(settings)


def test_symlink_out_of_the_repo_is_not_read(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text('import httpx\nTOKEN = "do-not-index"\nhttpx.get("http://payment/x")\n')
    repo = shop.make_repo(tmp_path / "shop", {"services/payment/app.py": shop.PAYMENT})
    (tmp_path / "shop" / "services" / "payment" / "leak.py").symlink_to(secret)
    shop.commit(repo, {}, "add a symlink")
    report = _ingest(settings, store, (tmp_path / "shop",))
    assert [r.message for r in report.rejected] == ["a symlink out of the repo; skipped"]
    with CodeIndex.open(settings) as index:
        assert all(h.path != "services/payment/leak.py" for h in index.search("TOKEN", 50))
