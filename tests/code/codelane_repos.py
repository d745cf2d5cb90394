"""Real Git repositories of small Python services, written file by file, for the code tests."""

from __future__ import annotations

from pathlib import Path

import git

ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip

PAYMENT = '''\
"""Payments."""
import os

import asyncpg
import httpx
from fastapi import FastAPI

STRIPE = "https://api.stripe.com/v1"
DB = os.environ.get("PAYMENTS_DB_URL", "postgresql://pay@payments-db:5432/payments")

app = FastAPI()


@app.post("/payments", status_code=201)
async def create_payment(body: dict) -> dict:
    """Bill the card token for the amount via Stripe and write a ledger row."""
    async with httpx.AsyncClient() as stripe:
        resp = await stripe.post(f"{STRIPE}/charges", data={"amount": body["amount"],
                                                          "source": body["card_token"]})
    pool = await asyncpg.create_pool(DB)
    await pool.execute("INSERT INTO ledger VALUES ($1)", resp.json()["id"])
    return {"status": "captured"}


@app.get("/payments/{payment_id}")
async def get_payment(payment_id: str) -> dict:
    return {"id": payment_id}
'''

CHECKOUT_MAIN = """\
from fastapi import FastAPI

from .routers import orders

app = FastAPI(title="checkout")
app.include_router(orders.router, prefix="/api")
"""

CHECKOUT_ORDERS = '''\
import os

import httpx
from fastapi import APIRouter

from ..subjects import ORDERS_CREATED

PAYMENT_URL = os.environ["PAYMENT_SERVICE_URL"]

router = APIRouter(prefix="/orders")


@router.post("")
async def place_order(body: dict, js) -> dict:
    """Reserve, charge, announce."""
    async with httpx.AsyncClient(timeout=5) as client:
        await client.post(f"{PAYMENT_URL}/payments", json=body)
    await js.publish(ORDERS_CREATED, b"{}")
    return {}


def render_receipt(order: dict) -> str:
    """Format the order as a plain-text receipt for the confirmation e-mail."""
    return "\\n".join(f"{line['sku']} x{line['qty']}" for line in order["lines"])
'''

CHECKOUT_SUBJECTS = """\
ORDERS_CREATED = "orders.created"
"""

CHECKOUT_HELPERS = '''\
def cents(amount: float) -> int:
    """Nothing structural here: not a CodeUnit."""
    return round(amount * 100)
'''

CHECKOUT_BROKEN = """\
def oops(:
    pass
"""

INVENTORY = """\
import nats
from nats.aio.client import Client


async def start(handler) -> Client:
    nc = await nats.connect("nats://nats:4222")
    js = nc.jetstream()
    await js.subscribe("orders.created", durable="inventory", cb=handler)
    await nc.subscribe("inventory.ping", cb=handler)
    return nc
"""

SHIPPING = """\
from flask import Blueprint, Flask
import requests
import redis

bp = Blueprint("quotes", __name__, url_prefix="/quotes")
cache = redis.Redis(host="shipping-cache", port=6379)


@bp.route("/<sku>", methods=["GET", "POST"])
def quote(sku):
    cache.publish("not.a.nats.subject", sku)
    stock = requests.get("http://inventory:8080/stock/" + sku, timeout=2)
    return {"sku": sku, "stock": stock.json()}


app = Flask(__name__)
app.register_blueprint(bp, url_prefix="/v1/quotes")
"""


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


SHOP = {
    "services/payment/app/__init__.py": "",
    "services/payment/app/main.py": PAYMENT,
    "services/checkout/app/__init__.py": "",
    "services/checkout/app/main.py": CHECKOUT_MAIN,
    "services/checkout/app/routers/__init__.py": "",
    "services/checkout/app/routers/orders.py": CHECKOUT_ORDERS,
    "services/checkout/app/subjects.py": CHECKOUT_SUBJECTS,
    "services/checkout/app/helpers.py": CHECKOUT_HELPERS,
    "services/checkout/app/broken.py": CHECKOUT_BROKEN,
    "services/inventory/app.py": INVENTORY,
    "services/shipping/app.py": SHIPPING,
    "scripts/seed.py": "import asyncpg\n",
    "README.md": "# shop\n",
}


def make_repo(root: Path, files: dict[str, str] | None = None) -> git.Repo:
    """A Git repo at `root` with `files` (default: the shop) in one commit."""
    write_files(root, SHOP if files is None else files)
    repo = git.Repo.init(root, initial_branch="main")
    with repo.git.custom_environment(**ENV):
        repo.git.add("-A")
        repo.git.commit("-m", "initial")
    return repo


def commit(repo: git.Repo, files: dict[str, str], message: str) -> None:
    write_files(Path(repo.working_tree_dir or "."), files)
    with repo.git.custom_environment(**ENV):
        repo.git.add("-A")
        repo.git.commit("-m", message)
