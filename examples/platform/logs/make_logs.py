"""Write the example platform's log file: what the shop's services logged from 09:00 to
10:05 on the day of the example alert (2026-01-15T10:00:00Z), exported from Loki as

    logcli query '{namespace="shop"}' --from 2026-01-15T09:00:00Z --to 2026-01-15T10:05:00Z \\
        --forward --limit 100000 --output jsonl > shop.jsonl

    python examples/platform/logs/make_logs.py [OUT_DIR]   # default: rewrite it here

Each line is `{"labels": {...}, "line": ..., "timestamp": ...}` (logcli's JSON Lines), the
line what `shopkit.logging` prints (`{"service": ..., "level": ..., "msg": ...}`); point
`logs_path` at the folder and the read path and the agent's `loki_query` read it. The
story (fixed seed, so the file never drifts), the same the span files tell:

- every service logs a summary of its requests once a minute, healthy until 09:48;
- 09:47:05-09:47:20: payment 1.9.2 (PR #17: Stripe charge timeout 2 s → 10 s) replaces
  1.9.1; from 09:48 charges held by the 10 s timeout fill payment's worker pool, and about
  one charge in five fails with an ERROR line (logs hold every request, the spans a sample);
- checkout logs each order payment failed as a WARN (a dependency failed, not checkout),
  frontend counts the 5xx it passes on; recommendation logs the same ERROR about an empty
  category every few minutes all along (chronic, not what changed).
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
START_S = 1768467600  # 2026-01-15T09:00:00Z
END_S = 1768471500  # 2026-01-15T10:05:00Z
ROLLOUT_S = 1768470425  # 09:47:05, payment 1.9.2's first pod starts (Flux: 09:47:12)
FAILING_S = 1768470480  # 09:48:00, the first charge the new timeout holds too long
POD = {
    "frontend": "frontend-5f6d8c7b9d-h2k4p",
    "checkout": "checkout-7d9f8b7c5d-x2x7z",
    "payment": "payment-6b9f5d7c84-q8w2n",
    "payment 1.9.2": "payment-7c5d9f8b6c-m4k7z",
    "cart": "cart-84c6d5f7b9-t7r2v",
    "inventory": "inventory-6c8f7d5b4-p9s3d",
    "shipping": "shipping-5b7d9c6f8-w4j6n",
    "catalog": "catalog-7f9c5d8b6-z3m8q",
    "recommendation": "recommendation-6d8b7c5f9-k5n2x",
}
RATE = {  # requests per minute each service serves when healthy
    "frontend": 44, "checkout": 9, "payment": 6, "cart": 15, "inventory": 12,
    "shipping": 7, "catalog": 30, "recommendation": 8,
}  # fmt: skip


def stamp(t: float) -> str:
    """RFC 3339 with nanoseconds, as Loki writes them (to the millisecond here)."""
    whole, ms = divmod(round(t * 1000), 1000)
    return datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{ms:03d}000000Z"


def record(t: float, service: str, level: str, msg: str, pod: str = "") -> dict[str, object]:
    line = json.dumps({"service": service, "level": level, "msg": msg})
    labels = {"namespace": "shop", "pod": pod or POD[service], "service_name": service,
              "stream": "stdout"}  # fmt: skip
    return {"labels": labels, "line": line, "timestamp": stamp(t)}


def main(out: Path = HERE) -> None:
    rng = random.Random(20260115)
    rows: list[dict[str, object]] = []
    failed: dict[int, int] = {}  # minute → payment charges failed in it
    t = float(FAILING_S)
    while t < END_S:  # ~1.3 failed charges a minute once the pool is full
        t += rng.uniform(25.0, 65.0)
        if t >= END_S:
            break
        order = f"o-{rng.randrange(16**6):06x}"
        busy = rng.uniform(1.1, 1.9)
        rows.append(record(t, "payment", "ERROR", "charge worker pool exhausted: all 8 "
                           f"workers waiting on a 10s Stripe timeout; order {order} answered "
                           "503", POD["payment 1.9.2"]))  # fmt: skip
        rows.append(record(t + busy + 0.4, "checkout", "WARNING", f"order {order}: payment "
                           f"answered 503 after {busy:.1f}s; answering 500"))  # fmt: skip
        failed[int(t - START_S) // 60] = failed.get(int(t - START_S) // 60, 0) + 1
    for minute in range((END_S - START_S) // 60):
        at = START_S + 60 * minute
        bad = failed.get(minute, 0)
        for service, rate in RATE.items():
            when = at + 59.5 + rng.uniform(0.0, 0.4)
            served = max(1, rate + rng.randint(-rate // 5, rate // 5))
            slow = (150.0, 400.0) if service == "payment" else (8.0, 30.0)  # payment: Stripe
            fivexx = bad if service in {"frontend", "checkout", "payment"} else 0
            p95 = round(rng.uniform(1100.0, 1900.0) if fivexx else rng.uniform(*slow), 1)
            pod = POD["payment 1.9.2"] if service == "payment" and when >= ROLLOUT_S else ""
            msg = f"served {served} requests in the last 60s: p95 {p95} ms, {fivexx} 5xx"
            rows.append(record(when, service, "INFO", msg, pod))
        if minute % 7 == 3:
            empty = "catalog returned no products for category 'gift-cards'"
            rows.append(record(at + rng.uniform(5.0, 50.0), "recommendation", "ERROR", empty))
        if minute % 11 == 5:
            user = f"u-{rng.randrange(16**4):04x}"
            rows.append(record(at + rng.uniform(5.0, 50.0), "payment", "WARNING",
                               f"card declined for user {user}: insufficient_funds (402)",
                               POD["payment 1.9.2"] if at >= ROLLOUT_S else ""))  # fmt: skip
    new, old = POD["payment 1.9.2"], POD["payment"]
    rows += [
        record(ROLLOUT_S, "payment", "INFO", "payment 1.9.2 starting: 8 charge workers, Stripe "
               "charge timeout 10.0s", new),
        record(ROLLOUT_S + 1.2, "payment", "INFO", "connected to payments-db", new),
        record(ROLLOUT_S + 7.0, "payment", "INFO", "received SIGTERM: draining 2 in-flight "
               "charges", old),
        record(ROLLOUT_S + 15.0, "payment", "INFO", "payment 1.9.1 stopped", old),
    ]  # fmt: skip
    rows.sort(key=lambda r: str(r["timestamp"]))
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    (out / "shop.jsonl").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
