"""A code chunk: a function, class, method or module body the code index embeds.

Chunks cross the lane → writer boundary beside records: the code lane finds them, the
writer (under its lease) embeds and stores them. Point ids are deterministic (uuid5 of
repo, path and symbol), so the graph can name them (`CodeUnit.embedding_ref`) before
anything is embedded, and the hash of the text decides whether a chunk needs embedding
again.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

_NS = uuid.UUID("6f1c7a52-3b7e-5d8e-9a41-2c0b5e7d9f10")
MAX_CHARS = 4000
"""Text beyond this is not embedded (the offline model reads 256 tokens anyway)."""


@dataclass(frozen=True)
class CodeChunk:
    repo: str
    path: str
    service: str
    symbol: str
    kind: str  # function | class | method | module
    start_line: int
    end_line: int
    text: str

    @property
    def point_id(self) -> str:
        return point_id(self.repo, self.path, self.symbol)

    @property
    def embed_text(self) -> str:
        head = f"{self.kind} {self.symbol} in service {self.service} ({self.path})\n"
        return (head + self.text)[:MAX_CHARS]

    @property
    def text_hash(self) -> str:
        return hashlib.blake2b(self.embed_text.encode("utf-8"), digest_size=12).hexdigest()


def point_id(repo: str, path: str, symbol: str) -> str:
    return str(uuid.uuid5(_NS, f"{repo}\x00{path}\x00{symbol}"))
