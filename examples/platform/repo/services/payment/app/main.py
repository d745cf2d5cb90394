"""Payments: charges cards through Stripe and keeps a ledger in Postgres."""

import os
import uuid

import asyncpg
import httpx
from fastapi import FastAPI, HTTPException

STRIPE_URL = "https://api.stripe.com/v1"
STRIPE_KEY = os.environ.get("STRIPE_API_KEY", "")
PAYMENTS_DB_URL = os.environ.get(
    "PAYMENTS_DB_URL", "postgresql://payment@payments-db:5432/payments"
)
CHARGE_TIMEOUT_S = 10.0

app = FastAPI(title="payment")


@app.on_event("startup")
async def startup() -> None:
    app.state.db = await asyncpg.create_pool(PAYMENTS_DB_URL)


@app.post("/payments", status_code=201)
async def create_payment(body: dict) -> dict:
    """Charge the amount to the card token; record the charge in the ledger."""
    async with httpx.AsyncClient(timeout=CHARGE_TIMEOUT_S) as stripe:
        resp = await stripe.post(
            f"{STRIPE_URL}/charges",
            auth=(STRIPE_KEY, ""),
            data={"amount": body["amount_cents"], "currency": "eur", "source": body["card_token"]},
        )
    if resp.status_code == 402:
        raise HTTPException(402, resp.json()["error"]["message"])
    resp.raise_for_status()
    payment_id = str(uuid.uuid4())
    await app.state.db.execute(
        "INSERT INTO payments (id, user_id, amount_cents, stripe_charge) VALUES ($1, $2, $3, $4)",
        payment_id,
        body["user_id"],
        body["amount_cents"],
        resp.json()["id"],
    )
    return {"id": payment_id, "status": "captured"}


@app.post("/payments/{payment_id}/refund")
async def refund_payment(payment_id: str) -> dict:
    """Give the money back for a captured payment."""
    row = await app.state.db.fetchrow(
        "SELECT stripe_charge FROM payments WHERE id = $1", payment_id
    )
    if row is None:
        raise HTTPException(404, "no such payment")
    async with httpx.AsyncClient(timeout=CHARGE_TIMEOUT_S) as stripe:
        await stripe.post(f"{STRIPE_URL}/refunds", auth=(STRIPE_KEY, ""), data={"charge": row[0]})
    return {"id": payment_id, "status": "refunded"}
