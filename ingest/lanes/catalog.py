"""The `catalog` lane: what users declare that no other lane can see.

A YAML file lists services (criticality, owner, tier), datastores, external APIs and the
links between them. Everything it yields carries `source: StaticInfra`.

    services:
      - name: checkout
        criticality: high
        owner: team-payments
        tier: 1
        calls: [payment, stripe]       # services or external APIs
        reads_from: [orders-db]        # datastores
    datastores:
      - {name: orders-db, db_system: postgresql}
    external_apis:
      - {name: stripe, url: https://api.stripe.com}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stackgraph.errors import InputError
from stackgraph.schema import EdgeRecord, NodeRecord, RecordBatch, Rejection, Source

from .bounded_yaml import YamlLimitError, YamlLimits, load_document
from .registry import LaneInputs, register

_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,252}$"
LIMITS = YamlLimits(max_scalar_chars=64 * 1024, max_alias_nodes=10_000)
"""A catalog is one hand-written document: no value in it needs more than 64 KiB."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=_NAME)
    description: str | None = None


class CatalogService(_Item):
    criticality: Literal["low", "medium", "high", "critical"] = "medium"
    owner: str | None = None
    tier: int | None = Field(default=None, ge=0, le=9)
    kind: str | None = None
    namespace: str | None = None
    repo: str | None = None
    calls: list[str] = []
    reads_from: list[str] = []
    publishes_to: list[str] = []
    consumes_from: list[str] = []


class CatalogDatastore(_Item):
    db_system: str | None = None


class CatalogExternalApi(_Item):
    url: str | None = None


class Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")
    services: list[CatalogService] = []
    datastores: list[CatalogDatastore] = []
    external_apis: list[CatalogExternalApi] = []


def load_catalog(path: Path, limits: YamlLimits = LIMITS) -> Catalog:
    """Read and validate a catalog file; errors name the file and the field path."""
    try:
        raw = load_document(path.read_text(encoding="utf-8"), limits)
    except OSError as exc:
        raise InputError(f"cannot read catalog {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"catalog {path} is not UTF-8 text (byte {exc.start})") from exc
    except YamlLimitError as exc:
        raise InputError(f"catalog {path}:{exc.line} is not read: {exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise InputError(f"catalog {path}{where} is not valid YAML: {exc}") from exc
    try:
        return Catalog.model_validate(raw or {})
    except ValidationError as exc:
        msgs = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]
        raise InputError(f"catalog {path}: " + "; ".join(msgs)) from exc


def _props(item: BaseModel, skip: set[str]) -> dict[str, Any]:
    return {
        k: v
        for k, v in item.model_dump().items()
        if k not in skip and v is not None and not isinstance(v, list)
    }


def build(catalog: Catalog, origin: str = "catalog") -> RecordBatch:
    """Pure: a catalog to records. Links to undeclared names become problems, not edges."""
    out = RecordBatch()
    src = Source.STATIC_INFRA
    kinds: dict[str, str] = {}
    for i, ds in enumerate(catalog.datastores):
        where = f"{origin}: datastores[{i}]"
        out.nodes.append(
            NodeRecord("Datastore", {"name": ds.name}, _props(ds, {"name"}), src, origin=where)
        )
        kinds[ds.name] = "Datastore"
    for i, api in enumerate(catalog.external_apis):
        where = f"{origin}: external_apis[{i}]"
        out.nodes.append(
            NodeRecord("ExternalApi", {"name": api.name}, _props(api, {"name"}), src, origin=where)
        )
        kinds[api.name] = "ExternalApi"
    for svc in catalog.services:
        kinds[svc.name] = "Service"
    for i, svc in enumerate(catalog.services):
        where = f"{origin}: services[{i}]"
        out.nodes.append(
            NodeRecord("Service", {"name": svc.name}, _props(svc, {"name"}), src, origin=where)
        )
        me = NodeRecord("Service", {"name": svc.name}).ref

        for field, etype, allowed in (
            ("calls", "CALLS", ("Service", "ExternalApi", "Datastore")),
            ("reads_from", "READS_FROM", ("Datastore",)),
        ):
            for j, target in enumerate(getattr(svc, field)):
                kind = kinds.get(target)
                at = f"{where}.{field}[{j}]"
                if kind is None or kind not in allowed:
                    declared = " or ".join(a.lower() for a in allowed)
                    msg = f"{target!r} is not a declared {declared}"
                    out.problems.append(Rejection(str(me), field, msg, at))
                    continue
                dst = NodeRecord(kind, {"name": target}).ref
                out.edges.append(EdgeRecord(etype, me, dst, {}, src, origin=at))
        for field, etype in (("publishes_to", "PUBLISHES_TO"), ("consumes_from", "CONSUMES_FROM")):
            for j, subject in enumerate(getattr(svc, field)):
                at = f"{where}.{field}[{j}]"
                out.nodes.append(
                    NodeRecord("NatsSubject", {"subject": subject}, {}, src, origin=at)
                )
                dst = NodeRecord("NatsSubject", {"subject": subject}).ref
                out.edges.append(EdgeRecord(etype, me, dst, {}, src, origin=at))
    return out


@register("catalog", "services, datastores, external APIs and links declared in a YAML file")
def collect(inputs: LaneInputs) -> RecordBatch:
    path = inputs.catalog or inputs.settings.catalog
    if path is None:
        raise InputError("the catalog lane needs a catalog file (--catalog FILE or `catalog:`)")
    return build(load_catalog(path), origin=str(path))
