"""Checkout API."""

from contextlib import asynccontextmanager

from fastapi import FastAPI

from . import db, events
from .routers import orders


@asynccontextmanager
async def lifespan(app: FastAPI):
    app.state.db = await db.create_pool()
    app.state.js = await events.connect()
    yield
    await app.state.db.close()


app = FastAPI(title="checkout", lifespan=lifespan)
app.include_router(orders.router, prefix="/api")


@app.get("/healthz")
async def healthz() -> dict:
    return {"ok": True}
