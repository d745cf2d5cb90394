"""The web UI under /ui: login, the incidents list, an incident with its blame graph, and
feedback. Server-rendered from the JSON API's own views; no script.

Pages need the session cookie (a visit without one is sent to the login form); every POST
needs the session's CSRF token (403 without it), so a page elsewhere cannot post as the
logged-in browser even if SameSite were ignored.
"""

from __future__ import annotations

import time
from importlib import resources
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from stackgraph.api.deps import ReaderDep, ServiceDep
from stackgraph.api.routers.incidents import Fingerprint, post_feedback
from stackgraph.api.schemas import ConfirmedFeedback, WrongFeedback
from stackgraph.api.service import UnknownIncident
from stackgraph.api.views import detail_view
from stackgraph.errors import StoreError

from . import graph_routes
from . import session as sessions
from .auth import checked, current_session, read_form, safe_next, to_login
from .blame_graph import graph_for
from .pages import STATES, STATUSES, Filter, list_rows, plan_rows
from .render import page, secure_headers

__all__ = ["router"]

router = APIRouter(prefix="/ui", include_in_schema=False)
router.include_router(graph_routes.router)

LIST_LIMIT = 200


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> HTMLResponse:
    nonce = sessions.login_nonce()
    response = page("login.html", nonce=nonce, next=safe_next(next), error="", session=None)
    response.set_cookie(sessions.LOGIN_COOKIE, nonce, max_age=600, path="/ui",
                        httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")  # fmt: skip
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    form = await read_form(request)
    nonce = request.cookies.get(sessions.LOGIN_COOKIE)
    target = safe_next(form.get("next"))
    if not nonce or form.get("nonce") != nonce:
        raise HTTPException(403, "the login form expired; load it again")
    expected: str = request.app.state.token
    if not sessions.same(expected, form.get("token")):
        return page("login.html", 401, nonce=nonce, next=target, error="wrong token",
                    session=None)  # fmt: skip
    cookie, _ = sessions.issue(expected)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(sessions.COOKIE, cookie, max_age=sessions.SESSION_TTL_S, path="/ui",
                        httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")  # fmt: skip
    response.delete_cookie(sessions.LOGIN_COOKIE, path="/ui")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    checked(request, await read_form(request))
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(sessions.COOKIE, path="/ui")
    return response


@router.get("/")
def incidents_page(
    request: Request,
    service: ServiceDep,
    q: Annotated[str | None, Query(max_length=200)] = None,
    status: str | None = None,
    state: str | None = None,
) -> Response:
    current = current_session(request)
    if current is None:
        return to_login(request)
    keep = Filter.of(q, status, state)
    try:
        items, total = service.page(0, LIST_LIMIT)
    except StoreError as exc:
        return page("error.html", 503, session=current, message=f"store unavailable: {exc}")
    rows = list_rows((detail_view(i) for i in items), keep, time.time())
    return page("incidents.html", session=current, rows=rows, filter=keep, total=total,
                shown_of=min(total, LIST_LIMIT), statuses=STATUSES, states=STATES)  # fmt: skip


@router.get("")
def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/", status_code=307)


@router.get("/incidents/{fingerprint}")
def incident_page(
    request: Request, fingerprint: Fingerprint, service: ServiceDep, reader: ReaderDep
) -> Response:
    current = current_session(request)
    if current is None:
        return to_login(request)
    try:
        detail = detail_view(service.get(fingerprint))
    except UnknownIncident:
        return page("error.html", 404, session=current, message="no such incident")
    except StoreError as exc:
        return page("error.html", 503, session=current, message=f"store unavailable: {exc}")
    graph, note = graph_for(reader, detail)
    return page("incident.html", session=current, d=detail, plan=plan_rows(detail),
                graph=graph, graph_note=note, now=time.time())  # fmt: skip


@router.post("/incidents/{fingerprint}/feedback")
async def feedback(request: Request, fingerprint: Fingerprint, service: ServiceDep) -> Response:
    """The form's verdict through the JSON API's own feedback route (same checks, same
    write), then back to the incident (post/redirect/get)."""
    form = await read_form(request)
    current = checked(request, form)
    body: ConfirmedFeedback | WrongFeedback
    try:
        if form.get("verdict") == "confirmed":
            body = ConfirmedFeedback(verdict="confirmed", root_cause=form.get("root_cause", ""))
        elif form.get("verdict") == "wrong":
            body = WrongFeedback(verdict="wrong")
        else:
            return page("error.html", 422, session=current, message="no such verdict")
    except ValidationError:
        return page("error.html", 422, session=current, message="not a root cause name")
    try:  # the write may wait for the writer lease: not on the event loop
        await run_in_threadpool(post_feedback, fingerprint, body, service)
    except HTTPException as exc:
        return page("error.html", exc.status_code, session=current, message=str(exc.detail))
    return RedirectResponse(f"/ui/incidents/{quote(fingerprint)}", status_code=303)


@router.get("/static/ui.css")
def stylesheet() -> Response:
    css = resources.files(__package__).joinpath("static/ui.css").read_text(encoding="utf-8")
    return secure_headers(Response(css, media_type="text/css"))
