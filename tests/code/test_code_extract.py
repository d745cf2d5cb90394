"""Pure extraction over (path, text) pairs: what becomes a node or edge, and what does not."""

from __future__ import annotations

import codelane_repos as shop

from stackgraph.ingest.lanes.code import Known, analyse, extract
from stackgraph.ingest.lanes.code.source import assign_services
from stackgraph.repo_config import RepoSpec, redact_url
from stackgraph.schema import RecordBatch, validate_edge, validate_node

KNOWN = Known(frozenset({"payment", "checkout", "inventory", "cart", "shipping"}),
              frozenset({"orders-db"}))  # fmt: skip


def _svc_files(service: str) -> list[tuple[str, str]]:
    return [(p, t) for p, t in shop.SHOP.items()
            if p.startswith(f"services/{service}/") and p.endswith(".py")]  # fmt: skip


def _edges(batch: RecordBatch, etype: str) -> set[tuple[str, str]]:
    out = set()
    for e in batch.edges:
        if e.type == etype:
            src = e.src.key.get("path") or e.src.key.get("name") or e.src.key.get("route")
            dst = e.dst.key.get("name") or e.dst.key.get("subject") or e.dst.key.get("path")
            out.add((str(src), str(dst)))
    return out


def _endpoints(batch: RecordBatch) -> set[tuple[str, str]]:
    return {(n.key["method"], n.key["route"]) for n in batch.nodes if n.label == "Endpoint"}


def _valid(batch: RecordBatch) -> None:
    for n in batch.nodes:
        assert not validate_node(n), (n, validate_node(n))
    for e in batch.edges:
        assert not validate_edge(e), (e, validate_edge(e))


def test_fastapi_router_prefixes_across_files_nats_constant_and_broken_file() -> None:
    batch = extract(_svc_files("checkout"), "checkout", repo="shop", known=KNOWN,
                    root="services/checkout")  # fmt: skip
    _valid(batch)
    assert _endpoints(batch) == {("POST", "/api/orders")}
    orders = "services/checkout/app/routers/orders.py"
    assert _edges(batch, "CALLS") == {(orders, "payment")}
    calls = [e for e in batch.edges if e.type == "CALLS"]
    assert calls[0].status == "Candidate" and calls[0].source == "StaticCode"
    assert _edges(batch, "PUBLISHES_TO") == {(orders, "orders.created")}
    assert _edges(batch, "DECLARES_SUBJECT") == {(orders, "orders.created")}
    assert ("services/checkout/app/main.py", "checkout") in _edges(batch, "IMPLEMENTS")
    units = {n.key["path"] for n in batch.nodes if n.label == "CodeUnit"}
    # helpers.py and subjects.py define nothing structural; broken.py does not parse
    assert units == {orders, "services/checkout/app/main.py"}
    [problem] = batch.problems
    assert problem.origin == "shop:services/checkout/app/broken.py:1:10"
    assert "does not parse" in problem.message
    ep = next(n for n in batch.nodes if n.label == "Endpoint")
    assert _edges(batch, "DEFINED_IN") == {("/api/orders", orders)} and ep.props["handler"] == (
        "place_order"
    )


def test_flask_blueprint_prefix_replaced_requests_call_and_redis_is_not_nats() -> None:
    batch = extract(_svc_files("shipping"), "shipping", repo="shop", known=KNOWN)
    _valid(batch)
    assert _endpoints(batch) == {("GET", "/v1/quotes/<sku>"), ("POST", "/v1/quotes/<sku>")}
    assert _edges(batch, "CALLS") == {("services/shipping/app.py", "inventory")}
    assert not [n for n in batch.nodes if n.label == "NatsSubject"]
    stores = {n.key["name"]: n.props["db_system"] for n in batch.nodes if n.label == "Datastore"}
    assert stores == {"shipping-cache": "redis"}


def test_core_and_jetstream_subscriptions_and_nats_datastore() -> None:
    batch = extract(_svc_files("inventory"), "inventory", repo="shop", known=KNOWN)
    assert _edges(batch, "CONSUMES_FROM") == {
        ("services/inventory/app.py", "orders.created"),
        ("services/inventory/app.py", "inventory.ping"),
    }
    assert _edges(batch, "READS_FROM") == {("services/inventory/app.py", "nats")}


def test_calls_resolve_only_to_known_services() -> None:
    batch = extract(_svc_files("payment"), "payment", repo="shop", known=KNOWN)
    assert not _edges(batch, "CALLS")  # api.stripe.com is not a service
    assert _edges(batch, "READS_FROM") == {("services/payment/app/main.py", "payments-db")}
    assert _endpoints(batch) == {("POST", "/payments"), ("GET", "/payments/{payment_id}")}


SETTINGS_STYLE = """\
import os
import aiohttp
import psycopg
import pymongo
from pydantic_settings import BaseSettings
from qdrant_client import QdrantClient
from falkordb import FalkorDB
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette
from starlette.routing import Route

class Settings(BaseSettings):
    cart_service_url: str = "http://cart.shop.svc.cluster.local:8080"

settings = Settings()
engine = create_async_engine(os.environ.get("ORDERS_DSN", "postgresql+asyncpg://o@orders-db/o"))
mongo = pymongo.MongoClient("mongodb://reviews-mongo:27017")
vectors = QdrantClient(url=os.environ.get("QDRANT_URL", "http://qdrant:6333"))
graph = FalkorDB(host="falkordb", port=6379)

async def fetch_cart(user):
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{settings.cart_service_url}/cart/{user}") as resp:
            return await resp.json()

def legacy():
    conn = psycopg.connect(os.environ["LEGACY_DB_URL"])
    return conn

async def homepage(request): ...

app = Starlette(routes=[Route("/", homepage), Route("/hook", homepage, methods=["POST"])])
app.add_route("/extra", homepage, methods=["PUT"])
"""


def test_settings_fields_aiohttp_and_every_datastore_client() -> None:
    batch = extract([("svc/app.py", SETTINGS_STYLE)], "reviews", repo="r", known=KNOWN)
    _valid(batch)
    assert _edges(batch, "CALLS") == {("svc/app.py", "cart")}
    stores = {n.key["name"]: n.props["db_system"] for n in batch.nodes if n.label == "Datastore"}
    assert stores == {
        "orders-db": "postgresql", "reviews-mongo": "mongodb", "qdrant": "qdrant",
        "falkordb": "falkordb", "legacy-db": "postgresql",
    }  # fmt: skip
    assert _endpoints(batch) == {("GET", "/"), ("POST", "/hook"), ("PUT", "/extra")}


ADD_ROUTE = """\
from fastapi import FastAPI, APIRouter
from flask import Flask

api = FastAPI()
v2 = APIRouter(prefix="/v2")

def handler(): ...

api.add_api_route("/items", handler, methods=["GET", "POST"])
v2.add_api_route("/things/{id}", handler)
api.include_router(v2, prefix="/api")

flask_app = Flask(__name__)
flask_app.add_url_rule("/legacy", "legacy", handler, methods=["DELETE"])
"""


def test_add_api_route_and_add_url_rule() -> None:
    batch = extract([("a.py", ADD_ROUTE)], "x", repo="r")
    assert _endpoints(batch) == {
        ("GET", "/items"), ("POST", "/items"), ("GET", "/api/v2/things/{id}"),
        ("DELETE", "/legacy"),
    }  # fmt: skip


def test_chunks_have_stable_ids_and_hashes_and_feed_embedding_ref() -> None:
    files = _svc_files("checkout")
    a = analyse(files, "checkout", repo="shop", known=KNOWN, root="services/checkout")
    b = analyse(files, "checkout", repo="shop", known=KNOWN, root="services/checkout")
    assert [(c.point_id, c.text_hash) for c in a.chunks] == [
        (c.point_id, c.text_hash) for c in b.chunks
    ]
    symbols = {c.symbol for c in a.chunks if c.path.endswith("orders.py")}
    assert symbols == {"place_order", "render_receipt", "<module>"}
    unit = next(n for n in a.batch.nodes if n.label == "CodeUnit" and "orders" in n.key["path"])
    assert sorted(unit.props["embedding_ref"]) == sorted(
        c.point_id for c in a.chunks if c.path.endswith("orders.py")
    )
    place = next(c for c in a.chunks if c.symbol == "place_order")
    assert place.text.startswith('@router.post("")') and place.start_line == 13


def test_layout_and_config_rules_assign_services() -> None:
    paths = sorted(p for p in shop.SHOP if p.endswith(".py"))
    inferred = assign_services(paths, RepoSpec(path="/x"))
    assert set(inferred) == {"payment", "checkout", "inventory", "shipping"}
    assert inferred["checkout"].root == "services/checkout"
    ruled = assign_services(paths, RepoSpec(path="/x", services={"services/pay*": "billing",
                                                                 "scripts": "ops"}))  # fmt: skip
    assert {s: [p for p, _ in f.files] for s, f in ruled.items()} == {
        "billing": ["services/payment/app/__init__.py", "services/payment/app/main.py"],
        "ops": ["scripts/seed.py"],
    }
    flat = assign_services(["cart_api/main.py", "tests/test_x.py", "setup.py"], RepoSpec(path="/x"))
    assert set(flat) == {"cart-api"}
    single = assign_services(["main.py", "db.py"], RepoSpec(path="/src/billing"))
    assert set(single) == {"billing"}


def test_redact_url() -> None:
    assert redact_url("https://bob:s3cret@git.example/a.git") == "https://***@git.example/a.git"
    assert redact_url("see https://tok@h/x and http://h/y") == "see https://***@h/x and http://h/y"
