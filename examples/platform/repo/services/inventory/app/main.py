"""Stock levels and reservations; releases reservations when orders are placed."""

import json
import os
from contextlib import asynccontextmanager

import asyncpg
import nats
from fastapi import FastAPI, HTTPException

DB_URL = os.environ.get("CATALOG_DB_URL", "postgresql://inventory@catalog-db:5432/catalog")
NATS_URL = os.environ.get("NATS_URL", "nats://nats:4222")
ORDERS_CREATED = "orders.created"


async def on_order_created(msg) -> None:
    """Turn the order's reservations into stock decrements."""
    order = json.loads(msg.data)
    async with app.state.db.acquire() as conn:
        for line in order["lines"]:
            await conn.execute(
                "UPDATE stock SET reserved = reserved - $2, on_hand = on_hand - $2 WHERE sku = $1",
                line["sku"],
                line["qty"],
            )
    await msg.ack()


@asynccontextmanager
async def lifespan(app: FastAPI):
    app.state.db = await asyncpg.create_pool(DB_URL)
    nc = await nats.connect(NATS_URL)
    js = nc.jetstream()
    await js.subscribe(ORDERS_CREATED, durable="inventory", cb=on_order_created)
    yield
    await nc.drain()


app = FastAPI(title="inventory", lifespan=lifespan)


@app.get("/stock/{sku}")
async def get_stock(sku: str) -> dict:
    row = await app.state.db.fetchrow("SELECT on_hand, reserved FROM stock WHERE sku = $1", sku)
    if row is None:
        raise HTTPException(404, "unknown sku")
    return {"sku": sku, "available": row["on_hand"] - row["reserved"]}


@app.post("/reservations")
async def reserve(body: dict) -> dict:
    """Hold stock for a cart's items; 409 when any item is short."""
    async with app.state.db.acquire() as conn, conn.transaction():
        for item in body["items"]:
            ok = await conn.fetchval(
                "UPDATE stock SET reserved = reserved + $2 WHERE sku = $1 "
                "AND on_hand - reserved >= $2 RETURNING true",
                item["sku"],
                item["qty"],
            )
            if not ok:
                raise HTTPException(409, f"{item['sku']} is out of stock")
    return {"reserved": len(body["items"])}
