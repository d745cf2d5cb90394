"""Storefront BFF: renders pages from the catalog, cart, checkout and recommendations."""

import os

import httpx
from fastapi import FastAPI, HTTPException

CATALOG_URL = os.environ.get("CATALOG_SERVICE_URL", "http://catalog:8080")
CART_URL = os.environ.get("CART_SERVICE_URL", "http://cart:8080")
CHECKOUT_URL = os.environ.get("CHECKOUT_SERVICE_URL", "http://checkout:8080")
RECOMMENDATION_URL = os.environ.get("RECOMMENDATION_SERVICE_URL", "http://recommendation:8080")

app = FastAPI(title="frontend")
http = httpx.AsyncClient(timeout=3.0)


@app.get("/")
async def home() -> dict:
    """Landing page: the first page of products."""
    resp = await http.get(f"{CATALOG_URL}/products", params={"limit": 12})
    resp.raise_for_status()
    return {"products": resp.json()}


@app.get("/products/{product_id}")
async def product_page(product_id: str) -> dict:
    """Product detail page with 'customers also bought' recommendations."""
    product = await http.get(f"{CATALOG_URL}/products/{product_id}")
    if product.status_code == 404:
        raise HTTPException(404, "no such product")
    recs = await http.get(f"{RECOMMENDATION_URL}/recommendations/{product_id}")
    return {"product": product.json(), "recommended": recs.json() if recs.is_success else []}


@app.post("/cart/{user_id}/items")
async def add_to_cart(user_id: str, item: dict) -> dict:
    """Add an item to the shopper's cart."""
    resp = await http.post(f"{CART_URL}/cart/{user_id}/items", json=item)
    resp.raise_for_status()
    return resp.json()


@app.post("/checkout/{user_id}")
async def checkout(user_id: str, payment: dict) -> dict:
    """Place the order for everything in the cart."""
    resp = await http.post(f"{CHECKOUT_URL}/api/orders", json={"user_id": user_id, **payment})
    if resp.status_code >= 500:
        raise HTTPException(502, "checkout is unavailable, please retry")
    return resp.json()
