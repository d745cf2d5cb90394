"""The product catalog: names, prices and pictures, from Postgres."""

import os

import asyncpg
from fastapi import APIRouter, FastAPI, HTTPException

DB_URL = os.environ.get("CATALOG_DB_URL", "postgresql://catalog@catalog-db:5432/catalog")

app = FastAPI(title="catalog")
products = APIRouter(prefix="/products")


@app.on_event("startup")
async def startup() -> None:
    app.state.db = await asyncpg.create_pool(DB_URL, max_size=20)


@products.get("")
async def list_products(limit: int = 20, offset: int = 0) -> list[dict]:
    """A page of products, cheapest first."""
    rows = await app.state.db.fetch(
        "SELECT sku, name, price_cents FROM products ORDER BY price_cents LIMIT $1 OFFSET $2",
        limit,
        offset,
    )
    return [dict(r) for r in rows]


@products.get("/{sku}")
async def get_product(sku: str) -> dict:
    row = await app.state.db.fetchrow("SELECT * FROM products WHERE sku = $1", sku)
    if row is None:
        raise HTTPException(404, "no such product")
    return dict(row)


app.include_router(products)
