"""The web UI's login session and CSRF tokens, derived from the API token.

Logging in with the bearer token sets a signed session cookie (HttpOnly, SameSite=Strict);
state-changing forms carry a CSRF token tied to that session. Both are HMACs keyed by the
API token, so nothing is stored server-side, every replica accepts them, and rotating the
token ends every session.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

__all__ = [
    "COOKIE",
    "LOGIN_COOKIE",
    "SESSION_TTL_S",
    "Session",
    "csrf_ok",
    "issue",
    "login_nonce",
    "same",
    "verify",
]

COOKIE = "sg_session"
LOGIN_COOKIE = "sg_login"
"""The login form's double-submit nonce: a forged login POST from elsewhere lacks it."""
SESSION_TTL_S = 12 * 3600


def _mac(key: str, message: str) -> str:
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Session:
    """A logged-in browser: its nonce names the session, its CSRF token guards forms."""

    nonce: str
    issued_at: int
    csrf: str


def issue(token: str, now: float | None = None) -> tuple[str, Session]:
    """A new session: the cookie value and what it stands for."""
    issued = int(time.time() if now is None else now)
    nonce = secrets.token_urlsafe(18)
    body = f"{issued}.{nonce}"
    return f"{body}.{_mac(token, 'session:' + body)}", _session(token, nonce, issued)


def _session(token: str, nonce: str, issued: int) -> Session:
    return Session(nonce, issued, _mac(token, "csrf:" + nonce))


def verify(token: str, cookie: str | None, now: float | None = None) -> Session | None:
    """The session a cookie stands for, or None when it is absent, forged or expired."""
    if not cookie or cookie.count(".") != 2:
        return None
    issued_text, nonce, mac = cookie.split(".")
    if not issued_text.isdigit():
        return None
    if not same(_mac(token, f"session:{issued_text}.{nonce}"), mac):
        return None
    issued = int(issued_text)
    if (time.time() if now is None else now) - issued > SESSION_TTL_S:
        return None
    return _session(token, nonce, issued)


def same(expected: str, given: str | None) -> bool:
    """Constant-time equality that takes any text (compare_digest refuses non-ASCII str)."""
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())


def csrf_ok(session: Session, given: str | None) -> bool:
    return same(session.csrf, given)


def login_nonce() -> str:
    return secrets.token_urlsafe(18)
