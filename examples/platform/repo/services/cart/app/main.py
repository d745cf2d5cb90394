"""Shopping carts, kept in Redis with a one-week expiry."""

import json
import os

import redis.asyncio as redis
from fastapi import FastAPI

CART_TTL_S = 7 * 24 * 3600

app = FastAPI(title="cart")
cache = redis.from_url(os.environ.get("CART_CACHE_URL", "redis://cart-cache:6379/0"))


@app.get("/cart/{user_id}")
async def get_cart(user_id: str) -> dict:
    """The user's cart: items with quantities and prices."""
    raw = await cache.get(f"cart:{user_id}")
    return {"user_id": user_id, "items": json.loads(raw) if raw else []}


@app.post("/cart/{user_id}/items")
async def add_item(user_id: str, item: dict) -> dict:
    """Add an item, or raise its quantity if it is already in the cart."""
    cart = await get_cart(user_id)
    for line in cart["items"]:
        if line["sku"] == item["sku"]:
            line["qty"] += item.get("qty", 1)
            break
    else:
        cart["items"].append({"qty": 1, **item})
    await cache.set(f"cart:{user_id}", json.dumps(cart["items"]), ex=CART_TTL_S)
    return cart


@app.delete("/cart/{user_id}")
async def empty_cart(user_id: str) -> dict:
    await cache.delete(f"cart:{user_id}")
    return {"user_id": user_id, "items": []}
