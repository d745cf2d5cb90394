"""What one Python file defines or uses: the records `structure.file_facts` finds.

Apps, routes and mounts are joined across files by `extract` (a router defined in one file
is mounted in another), so each names its object by module and variable (`ObjRef`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ObjRef:
    """A module-level object by module and variable name (`app.routers.cart`, `router`)."""

    module: str
    var: str


@dataclass(frozen=True)
class AppDef:
    ref: ObjRef
    kind: str
    prefix: str
    line: int


@dataclass(frozen=True)
class RouteDef:
    owner: ObjRef | None
    method: str
    path: str
    handler: str
    line: int


@dataclass(frozen=True)
class Mount:
    parent: ObjRef
    child: ObjRef
    prefix: str | None
    replaces: bool
    """Flask's `register_blueprint(url_prefix=)` replaces the blueprint's own prefix."""
    line: int


@dataclass(frozen=True)
class SubjectUse:
    subject: str
    role: str  # "publish" | "consume"
    line: int


@dataclass(frozen=True)
class OutboundCall:
    service: str
    method: str
    target: str
    line: int


@dataclass(frozen=True)
class StoreUse:
    name: str
    system: str
    client: str
    line: int


@dataclass
class FileFacts:
    path: str
    module: str
    apps: list[AppDef] = field(default_factory=list)
    routes: list[RouteDef] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)
    subjects: list[SubjectUse] = field(default_factory=list)
    calls: list[OutboundCall] = field(default_factory=list)
    stores: list[StoreUse] = field(default_factory=list)
    constants: dict[str, str] = field(default_factory=dict)
    web: bool = False
    """The file imports a web framework (routes on unknown objects are kept)."""

    @property
    def defines_structure(self) -> bool:
        return bool(
            self.apps or self.routes or self.mounts or self.subjects or self.calls or self.stores
        )
