"""'Customers also bought': products from the same category, from the catalog."""

import os
import random

import httpx
from fastapi import FastAPI

CATALOG_URL = os.environ.get("CATALOG_SERVICE_URL", "http://catalog:8080")

app = FastAPI(title="recommendation")
client = httpx.AsyncClient(base_url=CATALOG_URL, timeout=2.0)


@app.get("/recommendations/{sku}")
async def recommend(sku: str, count: int = 4) -> list[dict]:
    """Up to `count` other products, sampled from the catalog's first page."""
    resp = await client.get("/products", params={"limit": 50})
    candidates = [p for p in resp.json() if p["sku"] != sku]
    return random.sample(candidates, min(count, len(candidates)))
