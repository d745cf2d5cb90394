"""The orders database (Postgres)."""

import asyncpg

from .config import settings


async def create_pool() -> asyncpg.Pool:
    return await asyncpg.create_pool(dsn=settings.orders_db_url, min_size=2, max_size=10)


async def insert_order(pool: asyncpg.Pool, order: dict) -> None:
    """Store a placed order and its lines in one transaction."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO orders (id, user_id, total_cents, status) VALUES ($1, $2, $3, 'placed')",
            order["id"],
            order["user_id"],
            order["total_cents"],
        )
        await conn.executemany(
            "INSERT INTO order_lines (order_id, sku, qty) VALUES ($1, $2, $3)",
            [(order["id"], line["sku"], line["qty"]) for line in order["lines"]],
        )
