"""Qdrant clients for the code index and the incident memory, made one way: the API key
(`qdrant_api_key`) is always sent, and no error shows a credential — URLs are redacted
and the key is scrubbed from whatever the client raised.

    client, where = connect_qdrant(settings.qdrant_url, settings.qdrant_api_key)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import SecretStr

from stackgraph.errors import ConfigError, StoreError
from stackgraph.repo_config import redact_url

__all__ = ["QdrantError", "connect_qdrant", "qdrant_errors", "scrub"]


class QdrantError(StoreError):
    """Qdrant (server or local mode) failed; the message holds no credential."""


def _key(api_key: SecretStr | str | None) -> str | None:
    if isinstance(api_key, SecretStr):
        return api_key.get_secret_value() or None
    return api_key or None


def scrub(text: str, api_key: SecretStr | str | None = None) -> str:
    """`text` without credentials: URLs redacted, the API key replaced by ***."""
    key = _key(api_key)
    if key:
        text = text.replace(key, "***")
    return " ".join(redact_url(text).split())


def connect_qdrant(
    url: str, api_key: SecretStr | str | None = None, timeout: int = 30
) -> tuple[Any, str]:
    """A QdrantClient for a server and where it is, safe to print ("Qdrant at https://host").
    A malformed URL is a ConfigError naming the redacted URL."""
    from qdrant_client import QdrantClient

    where = f"Qdrant at {redact_url(url)}"
    try:
        client = QdrantClient(
            url=url, api_key=_key(api_key), timeout=timeout, check_compatibility=False
        )
    except Exception as exc:  # qdrant-client raises ValueError and transport errors
        raise ConfigError(f"{where}: {scrub(str(exc), api_key)}") from None
    return client, where


@contextmanager
def qdrant_errors(
    where: str, what: str, api_key: SecretStr | str | None = None,
    error: type[StoreError] = QdrantError,
) -> Iterator[None]:  # fmt: skip
    """Qdrant's errors (HTTP, gRPC, local mode, OS) become one-line `error`s, scrubbed."""
    from qdrant_client.http.exceptions import ApiException

    try:
        yield
    except (ApiException, OSError, RuntimeError) as exc:
        detail = scrub(str(exc), api_key) or type(exc).__name__
        raise error(f"{where}: {what} failed: {detail}") from None
