"""Placing orders: reserve stock, charge the card, store the order, announce it."""

import uuid

import httpx
from fastapi import APIRouter, HTTPException, Request

from ..config import settings
from ..db import insert_order
from ..events import order_created

router = APIRouter(prefix="/orders", tags=["orders"])


@router.post("")
async def place_order(request: Request, body: dict) -> dict:
    """Turn the user's cart into an order."""
    user_id = body["user_id"]
    async with httpx.AsyncClient(timeout=settings.payment_timeout_s) as client:
        cart = (await client.get(f"{settings.cart_service_url}/cart/{user_id}")).json()
        if not cart["items"]:
            raise HTTPException(400, "cart is empty")
        reserved = await client.post(
            f"{settings.inventory_service_url}/reservations", json={"items": cart["items"]}
        )
        if reserved.status_code == 409:
            raise HTTPException(409, "some items are out of stock")
        total = sum(i["price_cents"] * i["qty"] for i in cart["items"])
        charge = await client.post(
            f"{settings.payment_service_url}/payments",
            json={"user_id": user_id, "amount_cents": total, "card_token": body["card_token"]},
        )
        if charge.status_code != 201:
            raise HTTPException(402, "payment declined")
        quote = await client.post(f"{settings.shipping_service_url}/quotes", json=cart)
        await client.delete(f"{settings.cart_service_url}/cart/{user_id}")
    order = {
        "id": str(uuid.uuid4()),
        "user_id": user_id,
        "total_cents": total,
        "lines": [{"sku": i["sku"], "qty": i["qty"]} for i in cart["items"]],
        "shipping": quote.json(),
    }
    await insert_order(request.app.state.db, order)
    await order_created(request.app.state.js, order)
    return order


@router.get("/{order_id}")
async def get_order(request: Request, order_id: str) -> dict:
    row = await request.app.state.db.fetchrow("SELECT * FROM orders WHERE id = $1", order_id)
    if row is None:
        raise HTTPException(404, "no such order")
    return dict(row)
