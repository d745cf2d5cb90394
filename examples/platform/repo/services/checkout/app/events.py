"""Order events on NATS JetStream."""

import json

import nats
from nats.js import JetStreamContext

from .config import settings

ORDERS_CREATED = "orders.created"
ORDERS_STREAM = "ORDERS"


async def connect() -> JetStreamContext:
    """Connect to NATS and make sure the ORDERS stream exists."""
    nc = await nats.connect(settings.nats_url, name="checkout")
    js = nc.jetstream()
    await js.add_stream(name=ORDERS_STREAM, subjects=["orders.*"])
    return js


async def order_created(js: JetStreamContext, order: dict) -> None:
    """Tell inventory and shipping that an order was placed."""
    await js.publish(
        ORDERS_CREATED, json.dumps(order).encode(), headers={"Nats-Msg-Id": order["id"]}
    )
