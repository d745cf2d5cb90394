"""Dependencies with `Annotated` aliases: the service, the store, the bearer token."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from stackgraph.config import Settings
from stackgraph.errors import ConfigError
from stackgraph.store import GraphStore

from .service import IncidentService

_bearer = HTTPBearer(auto_error=False, description="STACKGRAPH_API_TOKEN")


def load_token(settings: Settings) -> str:
    """The token from `STACKGRAPH_API_TOKEN`, else from a mounted file; none is an error."""
    if settings.api_token:
        return settings.api_token
    if settings.api_token_file is not None:
        path = Path(settings.api_token_file)
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the API token file {path}: {exc.strerror}") from exc
        if token:
            return token
        raise ConfigError(f"the API token file {path} is empty")
    raise ConfigError("no API token: set STACKGRAPH_API_TOKEN or api_token_file (a mounted secret)")


def get_service(request: Request) -> IncidentService:
    service: IncidentService = request.app.state.service
    return service


def get_store(request: Request) -> GraphStore:
    store: GraphStore = request.app.state.store
    return store


def get_reader(request: Request) -> GraphStore:
    """The read path's store (a FalkorDB replica with `falkordb_read_url`)."""
    store: GraphStore = request.app.state.reader
    return store


def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    expected: str = request.app.state.token
    given = credentials.credentials if credentials is not None else ""
    if not given or not secrets.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "a valid bearer token is required",
            headers={"WWW-Authenticate": "Bearer"},
        )


ServiceDep = Annotated[IncidentService, Depends(get_service)]
StoreDep = Annotated[GraphStore, Depends(get_store)]
ReaderDep = Annotated[GraphStore, Depends(get_reader)]
Authed = Depends(require_token)
