"""Who is asking: the session cookie of a logged-in browser, the CSRF token of its forms,
and where an anonymous visit goes (the login form, then back)."""

from __future__ import annotations

from urllib.parse import parse_qs, quote

from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse

from . import session as sessions

__all__ = ["checked", "current_session", "read_form", "safe_next", "to_login"]


def current_session(request: Request) -> sessions.Session | None:
    return sessions.verify(request.app.state.token, request.cookies.get(sessions.COOKIE))


def to_login(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/ui/login?next={quote(target, safe='')}", status_code=303)


def safe_next(target: str | None) -> str:
    """Only a path of this UI: never another host (`//evil`), never a scheme."""
    if target and target.startswith("/ui") and "//" not in target and "\\" not in target:
        return target
    return "/ui/"


async def read_form(request: Request) -> dict[str, str]:
    """An urlencoded body as first values (the app's body limit already applies)."""
    try:
        fields = parse_qs((await request.body()).decode("utf-8"), max_num_fields=20)
    except UnicodeDecodeError as exc:
        raise HTTPException(400, "the form is not UTF-8") from exc
    except ValueError as exc:  # more fields than any form of ours has
        raise HTTPException(400, "too many form fields") from exc
    return {k: v[0] for k, v in fields.items()}


def checked(request: Request, form: dict[str, str]) -> sessions.Session:
    current = current_session(request)
    if current is None:
        raise HTTPException(403, "log in first")
    if not sessions.csrf_ok(current, form.get("csrf")):
        raise HTTPException(403, "missing or wrong CSRF token")
    return current
