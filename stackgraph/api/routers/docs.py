"""The OpenAPI document and the pages that browse it, behind the token like every other
route unless `api_docs_public` opens them (FastAPI serves them to anyone by default).

The handlers read the app from the request, never from a closure: FastAPI caches what it
learns of each endpoint function in a process-wide LRU (4,096 entries), so a closure over
the app kept every app built in the process alive — `eval e2e` builds one per case."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from ..deps import Authed

OPENAPI_URL = "/openapi.json"

router = APIRouter(dependencies=[Authed], include_in_schema=False)


@router.get(OPENAPI_URL)
def openapi(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/docs")
def swagger(request: Request) -> HTMLResponse:
    title = f"{request.app.title} - docs"
    return get_swagger_ui_html(openapi_url=OPENAPI_URL, title=title)


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(openapi_url=OPENAPI_URL, title=f"{request.app.title} - ReDoc")
