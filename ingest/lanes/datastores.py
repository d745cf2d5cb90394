"""Recognise datastores among workloads: by image, by a label, by the ports or env they use.

Datastores are modelled apart from services because RCA treats them differently (a slow
database explains many slow callers). The `stackgraph.io/datastore` label or annotation
wins: a db system name (`postgresql`) marks a datastore, `false` vetoes the guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .k8s_objects import Obj, as_list, containers, main_container, steer

# image name token -> db_system (the names the catalog uses)
IMAGE_SYSTEMS: dict[str, str] = {
    "postgres": "postgresql",
    "postgresql": "postgresql",
    "postgis": "postgresql",
    "timescaledb": "postgresql",
    "cockroach": "cockroachdb",
    "mysql": "mysql",
    "mariadb": "mariadb",
    "percona": "mysql",
    "redis": "redis",
    "valkey": "redis",
    "keydb": "redis",
    "dragonfly": "redis",
    "memcached": "memcached",
    "mongo": "mongodb",
    "mongodb": "mongodb",
    "rabbitmq": "rabbitmq",
    "nats": "nats",
    "kafka": "kafka",
    "redpanda": "kafka",
    "zookeeper": "zookeeper",
    "elasticsearch": "elasticsearch",
    "opensearch": "opensearch",
    "falkordb": "falkordb",
    "qdrant": "qdrant",
    "cassandra": "cassandra",
    "scylla": "cassandra",
    "etcd": "etcd",
    "clickhouse": "clickhouse",
    "influxdb": "influxdb",
    "couchdb": "couchdb",
    "neo4j": "neo4j",
    "minio": "minio",
    "weaviate": "weaviate",
    "milvus": "milvus",
}

PORT_SYSTEMS: dict[int, str] = {
    5432: "postgresql",
    3306: "mysql",
    6379: "redis",
    11211: "memcached",
    27017: "mongodb",
    5672: "rabbitmq",
    4222: "nats",
    9092: "kafka",
    9200: "elasticsearch",
    6333: "qdrant",
    9042: "cassandra",
    8123: "clickhouse",
}

# variables only a server reads (clients have MYSQL_HOST and the like, servers these)
ENV_SYSTEMS: dict[str, str] = {
    "POSTGRES_INITDB_ARGS": "postgresql",
    "PGDATA": "postgresql",
    "MYSQL_ROOT_PASSWORD": "mysql",
    "MYSQL_ALLOW_EMPTY_PASSWORD": "mysql",
    "MYSQL_RANDOM_ROOT_PASSWORD": "mysql",
    "MARIADB_ROOT_PASSWORD": "mariadb",
    "MONGO_INITDB_ROOT_USERNAME": "mongodb",
    "MONGO_INITDB_DATABASE": "mongodb",
    "RABBITMQ_ERLANG_COOKIE": "rabbitmq",
}

# sidecars and tools whose image names a datastore but which are not one
_NOT_A_STORE = {"exporter", "operator", "proxy", "client", "cli", "backup", "admin", "ui", "init"}
_TOKEN = re.compile(r"[a-z0-9]+")


def image_name(image: str) -> str:
    """`registry:5000/org/redis-cart:7@sha256:..` -> `redis-cart`."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


def system_from_image(image: str) -> str | None:
    tokens = _TOKEN.findall(image_name(image))
    if any(t in _NOT_A_STORE for t in tokens):
        return None
    for t in tokens:
        if t in IMAGE_SYSTEMS:
            return IMAGE_SYSTEMS[t]
    return None


def _ports(container: Mapping[str, Any]) -> Iterable[int]:
    for p in as_list(container.get("ports")):
        if isinstance(p, dict) and isinstance(p.get("containerPort"), int):
            yield p["containerPort"]


def _env_names(container: Mapping[str, Any]) -> Iterable[str]:
    for e in as_list(container.get("env")):
        if isinstance(e, dict) and isinstance(e.get("name"), str):
            yield e["name"]


def recognise(workload: Obj, service_objs: Iterable[Obj] = ()) -> str | None:
    """The db system a workload runs, or None for an ordinary service.

    Order: the steering label on the workload or its k8s Services; the main container's
    image; then the only-datastore signals (well-known port, db env vars) when the image
    says nothing (e.g. `weaveworksdemos/catalogue-db`, a MySQL image under another name).
    """
    for obj in (workload, *service_objs):
        explicit = steer(obj, "datastore")
        if explicit is not None:
            low = explicit.lower()
            if low in {"false", "no", "0"}:
                return None
            return "unknown" if low in {"true", "yes", "1"} else low
    main = main_container(workload)
    if main is None:
        return None
    image = str(main.get("image") or "")
    by_image = system_from_image(image)
    if by_image:
        return by_image
    if any(t in _NOT_A_STORE for t in _TOKEN.findall(image_name(image))):
        return None
    for port in _ports(main):
        if port in PORT_SYSTEMS:
            return PORT_SYSTEMS[port]
    for env in _env_names(main):
        if env in ENV_SYSTEMS:
            return ENV_SYSTEMS[env]
    return None


def images(workload: Obj) -> list[str]:
    return sorted({str(c.get("image")) for c in containers(workload) if c.get("image")})
