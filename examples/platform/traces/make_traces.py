"""Write the example platform's span files: what the shop's OpenTelemetry Collector file
exporter recorded in the ten minutes before the example alert (2026-01-15T10:00:00Z).

    python examples/platform/traces/make_traces.py [OUT_DIR]   # default: rewrite them here

Each `<flow>.json` holds JSON Lines, one OTLP `ExportTraceServiceRequest` per trace, as the
Collector's file exporter writes them; `stackgraph ingest --lanes telemetry --spans DIR`
reads the folder. The story the spans tell (fixed seed, so the files never drift):

- PR #17 (payment timeouts) was rolled out to payment at 09:47; from 09:50 on, 7 of 50
  `POST /payments` calls from checkout fail after 1.1-1.9 s (payment's worker pool is held by
  10 s charge timeouts), and checkout returns 500 for those orders;
- payment's own calls (Stripe, payments-db) and everything else stay healthy.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
START_S = 1768470600  # 2026-01-15T09:50:00Z, ten minutes before the alert fires
SPREAD_S = 560.0  # traces start within 09:50:00-09:59:20
SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5


@dataclass
class Call:
    """One request in a trace: `http` (client + server span), `db` or `ext` (a client span
    only: the callee is not instrumented) or `msg` (a producer span, consumer children)."""

    client: str
    server: str
    name: str
    ms: float
    kind: str = "http"
    children: list[Call] = field(default_factory=list)
    error: str = ""
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Trace:
    rng: random.Random
    spans: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def __post_init__(self) -> None:
        self.trace_id = f"{self.rng.getrandbits(128):032x}"

    def new_id(self) -> str:
        return f"{self.rng.getrandbits(64):016x}"

    def add(self, service: str, sid: str, parent: str, name: str, kind: int, start: int,
            end: int, attrs: dict[str, str], error: str = "") -> None:  # fmt: skip
        span: dict[str, Any] = {
            "traceId": self.trace_id, "spanId": sid, "name": name, "kind": kind,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
        }  # fmt: skip
        if error:
            span["status"] = {"code": 2, "message": error}
        if parent:
            span["parentSpanId"] = parent
        if attrs:
            span["attributes"] = [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
        self.spans[service].append(span)

    def request(self) -> dict[str, Any]:
        return {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [
                            {"key": "service.name", "value": {"stringValue": svc}},
                        ]
                    },
                    "scopeSpans": [{"spans": spans}],
                }
                for svc, spans in sorted(self.spans.items())
            ]
        }


def _ns(ms: float) -> int:
    return round(ms * 1e6)


def render(t: Trace, call: Call, parent: str, start: int) -> int:
    """Write the spans of `call` starting at `start` (ns) under `parent`; return its end."""
    if call.kind in ("db", "ext"):
        end = start + _ns(call.ms)
        t.add(call.client, t.new_id(), parent, call.name, CLIENT, start, end, call.attrs,
              call.error)  # fmt: skip
        return end
    if call.kind == "msg":
        sid = t.new_id()
        end = start + _ns(call.ms)
        t.add(call.client, sid, parent, f"{call.name} publish", PRODUCER, start, end, call.attrs)
        for consumer in call.children:
            c0 = end + _ns(1.5)
            t.add(consumer.server, t.new_id(), sid, f"{call.name} process", CONSUMER, c0,
                  c0 + _ns(consumer.ms), call.attrs)  # fmt: skip
        return end
    cid, sid = t.new_id(), t.new_id()
    s0 = start + _ns(0.4)
    cursor = s0 + _ns(0.3)
    for child in call.children:
        cursor = render(t, child, sid, cursor) + _ns(0.2)
    s1 = cursor + _ns(call.ms)
    end = s1 + _ns(0.4)
    t.add(call.client, cid, parent, call.name, CLIENT, start, end,
          {"peer.service": call.server}, call.error)  # fmt: skip
    t.add(call.server, sid, cid, call.name.split(" ", 1)[1], SERVER, s0, s1, {}, call.error)
    return end


def root(t: Trace, service: str, name: str, start: int, children: list[Call], error: str) -> None:
    sid, cursor = t.new_id(), start + _ns(0.5)
    for child in children:
        cursor = render(t, child, sid, cursor) + _ns(0.2)
    t.add(service, sid, "", name, SERVER, start, cursor + _ns(2.0), {}, error)


def db(client: str, name: str, system: str, op: str, ms: float) -> Call:
    attrs = {"db.system": system, "peer.service": name, "db.operation.name": op}
    return Call(client, name, f"{op} {name}", ms, kind="db", attrs=attrs)


def ms(rng: random.Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 3)


# -- flows ------------------------------------------------------------------------------

Flow = Callable[[random.Random, bool], tuple[str, list[Call], str]]
"""(rng, this trace fails?) → (root span name, calls under the frontend's root, error)."""


def place_order(rng: random.Random, fail: bool) -> tuple[str, list[Call], str]:
    cart = Call(
        "checkout",
        "cart",
        "GET /carts/{id}",
        ms(rng, 2, 6),
        children=[db("cart", "cart-cache", "redis", "HGETALL", ms(rng, 0.4, 1.5))],
    )
    reserve = Call(
        "checkout",
        "inventory",
        "POST /reservations",
        ms(rng, 4, 12),
        children=[db("inventory", "catalog-db", "postgresql", "UPDATE", ms(rng, 3, 15))],
    )
    quote = Call(
        "checkout",
        "shipping",
        "GET /quotes",
        ms(rng, 5, 15),
        children=[
            Call(
                "shipping",
                "carrier-api",
                "POST /v2/rates",
                ms(rng, 40, 120),
                kind="ext",
                attrs={"peer.service": "carrier-api", "server.address": "api.carrier.example"},
            )
        ],
    )
    if fail:
        why = "charge worker pool exhausted: all workers waiting on a 10s Stripe timeout"
        pay = Call("checkout", "payment", "POST /payments", ms(rng, 1100, 1900), error=why)
        calls = [cart, reserve, quote, pay]
        return (
            "POST /api/checkout",
            [
                Call(
                    "frontend",
                    "checkout",
                    "POST /orders",
                    ms(rng, 3, 8),
                    children=calls,
                    error="payment failed: 503",
                )
            ],
            "500",
        )
    stripe = Call(
        "payment",
        "stripe",
        "POST /v1/charges",
        ms(rng, 110, 240),
        kind="ext",
        attrs={"peer.service": "stripe", "server.address": "api.stripe.com"},
    )
    pay = Call(
        "checkout",
        "payment",
        "POST /payments",
        ms(rng, 8, 25),
        children=[stripe, db("payment", "payments-db", "postgresql", "INSERT", ms(rng, 2, 8))],
    )
    publish = Call(
        "checkout",
        "orders.created",
        "orders.created",
        ms(rng, 0.3, 1.0),
        kind="msg",
        attrs={"messaging.system": "nats", "messaging.destination.name": "orders.created"},
        children=[
            Call("", "inventory", "", ms(rng, 2, 6)),
            Call("", "shipping", "", ms(rng, 5, 20)),
        ],
    )
    calls = [
        cart,
        reserve,
        quote,
        pay,
        db("checkout", "orders-db", "postgresql", "INSERT", ms(rng, 3, 10)),
        publish,
    ]
    return "POST /api/checkout", [Call("frontend", "checkout", "POST /orders", ms(rng, 3, 8),
                                       children=calls)], ""  # fmt: skip


def order_preview(rng: random.Random, fail: bool) -> tuple[str, list[Call], str]:
    calls = [
        Call("checkout", "cart", "GET /carts/{id}", ms(rng, 2, 6),
             children=[db("cart", "cart-cache", "redis", "HGETALL", ms(rng, 0.4, 1.5))]),
        Call("checkout", "inventory", "GET /stock", ms(rng, 3, 9),
             children=[db("inventory", "catalog-db", "postgresql", "SELECT", ms(rng, 2, 9))]),
    ]  # fmt: skip
    return "GET /api/checkout/preview", [Call("frontend", "checkout", "GET /orders/preview",
                                              ms(rng, 2, 6), children=calls)], ""  # fmt: skip


def browse(rng: random.Random, fail: bool) -> tuple[str, list[Call], str]:
    q = db("catalog", "catalog-db", "postgresql", "SELECT", ms(rng, 2, 18))
    return "GET /products", [Call("frontend", "catalog", "GET /products", ms(rng, 3, 10),
                                  children=[q])], ""  # fmt: skip


def view_cart(rng: random.Random, fail: bool) -> tuple[str, list[Call], str]:
    q = db("cart", "cart-cache", "redis", "HGETALL", ms(rng, 0.4, 1.5))
    return "GET /cart", [Call("frontend", "cart", "GET /carts/{id}", ms(rng, 2, 6),
                              children=[q])], ""  # fmt: skip


def recommend(rng: random.Random, fail: bool) -> tuple[str, list[Call], str]:
    q = db("catalog", "catalog-db", "postgresql", "SELECT", ms(rng, 2, 12))
    cat = Call("recommendation", "catalog", "GET /products", ms(rng, 3, 8), children=[q])
    return "GET /recommendations", [Call("frontend", "recommendation", "GET /recommendations",
                                         ms(rng, 8, 25), children=[cat])], ""  # fmt: skip


# (file, flow, traces, failing traces)
FLOWS: list[tuple[str, Flow, int, int]] = [
    ("place-order", place_order, 50, 7),
    ("order-preview", order_preview, 30, 0),
    ("browse", browse, 40, 0),
    ("view-cart", view_cart, 30, 0),
    ("recommendations", recommend, 30, 0),
]


def main(out: Path = HERE) -> None:
    rng = random.Random(20260115)
    for name, flow, n, failing in FLOWS:
        bad = set(rng.sample(range(n), failing))
        lines = []
        for i in range(n):
            t = Trace(rng)
            root_name, calls, error = flow(rng, i in bad)
            start = _ns((START_S + SPREAD_S * (i + rng.random()) / n) * 1000.0)
            root(t, "frontend", root_name, start, calls, error)
            lines.append(json.dumps(t.request(), separators=(",", ":")))
        (out / f"{name}.json").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
