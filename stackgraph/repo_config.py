"""How a Git repository maps onto services, as written in the config's `repos:` list.

    repos:
      - url: https://github.com/acme/shop.git    # cloned into <data_dir>/repos/
        branch: main
        services: [checkout, payment]            # found as services/<name>/ or <name>/
      - path: /src/monolith
        services: {"src/pay": payment, "src/cart/*": cart}   # path prefix or glob → service

Without `services`, they are inferred from the layout: top-level `services/<name>/` or
`<name>/` folders holding Python. Kept apart from the lane so `config.py` can import it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

_SERVICE = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,126}$"


_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:api[_-]?key|access[_-]?token|token|password|secret)=)[^&#\s]+"
)


def redact_url(url: str) -> str:
    """Credentials out of every URL in `url` (a URL or a message holding some):
    `https://user:token@host/x?api_key=k` → `https://***@host/x?api_key=***`."""
    return _SECRET_QUERY.sub(r"\1***", _USERINFO.sub("***@", url))


class RepoSpec(BaseModel):
    """One repository: where it is, which branch, and which services it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = None
    path: Path | None = None
    branch: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._/-]{1,200}$")
    name: str | None = Field(default=None, pattern=_SERVICE)
    """The repo's name on CodeUnit nodes; default: the last part of the URL or path."""
    services: list[str] | dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_location(self) -> RepoSpec:
        if (self.url is None) == (self.path is None):
            raise ValueError("a repo needs exactly one of `url` or `path`")
        names = (
            self.services
            if isinstance(self.services, list)
            else list((self.services or {}).values())
        )
        for svc in names:
            if not re.match(_SERVICE, svc):
                raise ValueError(f"service name {svc!r} is not valid")
        return self

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():  # a URL's credentials never reach a log
            yield name, redact_url(value) if name == "url" and value else value

    @property
    def display(self) -> str:
        """Where the repo is, safe to print (credentials redacted)."""
        return redact_url(self.url) if self.url else str(self.path)

    @property
    def repo_name(self) -> str:
        if self.name:
            return self.name
        if self.path is not None:
            return self.path.resolve().name or "repo"
        tail = redact_url(self.url or "").rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        return tail.removesuffix(".git") or "repo"
