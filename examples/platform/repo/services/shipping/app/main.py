"""Shipping quotes and shipments through the carrier's API."""

import json
import os
from contextlib import asynccontextmanager

import httpx
import nats
from fastapi import FastAPI

CARRIER_URL = os.environ.get("CARRIER_API_URL", "https://api.carrier.example/v2")
NATS_URL = os.environ.get("NATS_URL", "nats://nats:4222")


async def on_order_created(msg) -> None:
    """Book a shipment with the carrier for every new order."""
    order = json.loads(msg.data)
    async with httpx.AsyncClient(timeout=5.0) as carrier:
        await carrier.post(f"{CARRIER_URL}/shipments", json={"reference": order["id"]})
    await msg.ack()


@asynccontextmanager
async def lifespan(app: FastAPI):
    nc = await nats.connect(NATS_URL)
    await nc.jetstream().subscribe("orders.created", durable="shipping", cb=on_order_created)
    yield
    await nc.drain()


app = FastAPI(title="shipping", lifespan=lifespan)


@app.post("/quotes")
async def quote(cart: dict) -> dict:
    """Price of shipping a cart: a base fee plus a per-item fee."""
    items = sum(i["qty"] for i in cart.get("items", []))
    return {"carrier": "carrier-api", "price_cents": 499 + 99 * items, "days": 3}
