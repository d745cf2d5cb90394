"""The OpenAPI document and the pages that browse it, behind the token like every other
route unless `api_docs_public` opens them (FastAPI serves them to anyone by default)."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from ..deps import Authed

OPENAPI_URL = "/openapi.json"


def docs_router(app: FastAPI) -> APIRouter:
    """`/openapi.json`, `/docs` and `/redoc`, each needing the bearer token."""
    router = APIRouter(dependencies=[Authed], include_in_schema=False)

    @router.get(OPENAPI_URL)
    def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @router.get("/docs")
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=OPENAPI_URL, title=f"{app.title} - docs")

    @router.get("/redoc")
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=OPENAPI_URL, title=f"{app.title} - ReDoc")

    return router
