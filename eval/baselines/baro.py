"""BARO (Pham et al., FSE'24) taken unmodified from the RCAEval package.

The case's metrics are put into the frame RCAEval expects: a ``time`` column plus one
``<service>_<metric>`` column per series, restricted to the baseline and alert windows, and
``inject_time`` = the case's fault start (BARO fits a RobustScaler on rows before it and
ranks columns by the max z-score after it). Ranked columns are mapped back to services by
first occurrence; services without surviving columns go last in name order.

Series of a case may sit on slightly different clocks (pods sampled a few ms/s apart), so
rows are bucketed on a grid of the data's own resolution anchored at ``inject_time`` (floor,
so no pre-fault sample lands after the split), then forward/backward filled per column.

RCAEval is imported lazily. ``RCAEval.e2e`` imports every method (networkx, causal-learn,
matplotlib...) on Python 3.11, so if that package import fails we load ``e2e/baro.py`` by
file path, which only needs numpy, pandas and scikit-learn.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.model import Case

INSTALL_HINT = "pip install pandas scikit-learn && pip install --no-deps RCAEval==1.8.1"

_BARO: Callable[..., dict[str, Any]] | None = None


def _load_baro() -> Callable[..., dict[str, Any]]:
    """RCAEval's ``baro`` function, imported once."""
    global _BARO
    if _BARO is not None:
        return _BARO
    try:
        import pandas  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as exc:
        msg = f"the BARO baseline needs pandas and scikit-learn: {INSTALL_HINT}"
        raise ImportError(msg) from exc
    try:
        from RCAEval.e2e.baro import baro as fn
    except ImportError:
        spec = importlib.util.find_spec("RCAEval")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(f"the BARO baseline needs RCAEval: {INSTALL_HINT}") from None
        path = Path(next(iter(spec.submodule_search_locations))) / "e2e" / "baro.py"
        mspec = importlib.util.spec_from_file_location("_stackgraph_rcaeval_baro", path)
        if mspec is None or mspec.loader is None:
            raise ImportError(f"cannot load {path}: {INSTALL_HINT}") from None
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[mspec.name] = mod
        mspec.loader.exec_module(mod)
        fn = mod.baro
    _BARO = fn
    return fn


def resolution(case: Case) -> float:
    """Median sampling step over the case's series (60 s for Nezha/ChangeRCA, 1 s for RCD)."""
    steps = [np.median(np.diff(m.times)) for m in case.metrics if m.times.size > 1]
    return float(np.median(steps)) if steps else 1.0


def build_frame(case: Case) -> tuple[Any, dict[str, str]]:
    """The BARO input DataFrame and a column -> service map."""
    import pandas as pd

    step = resolution(case)
    t0 = case.inject_time
    cols: dict[str, dict[float, float]] = {}
    col_service: dict[str, str] = {}
    for ms in case.metrics:
        col = f"{ms.service}_{ms.name}"
        keys = t0 + np.floor((ms.times - t0) / step) * step
        bucket = cols.setdefault(col, {})
        sums: dict[float, list[float]] = {}
        for k, v in zip(keys.tolist(), ms.values.tolist(), strict=True):
            sums.setdefault(k, []).append(v)
        bucket.update({k: float(np.mean(v)) for k, v in sums.items()})
        col_service[col] = ms.service
    frame = pd.DataFrame(cols).sort_index()
    frame = frame.ffill().bfill()
    frame.insert(0, "time", frame.index.to_numpy(dtype=float))
    return frame.reset_index(drop=True), col_service


def rank_baro(case: Case) -> list[str]:
    """Services ranked by RCAEval's BARO (first occurrence of a service's columns)."""
    baro = _load_baro()
    frame, col_service = build_frame(case)
    before = frame["time"] < case.inject_time
    if not before.any() or before.all():  # RCAEval cannot split it: no verdict, names only
        return sorted(case.services)
    out = baro(frame, inject_time=case.inject_time, dataset=case.dataset)
    ranked: list[str] = []
    for col in out["ranks"]:
        svc = col_service.get(col)
        if svc is not None and svc not in ranked:
            ranked.append(svc)
    ranked += sorted(s for s in case.services if s not in ranked)
    return [s for s in ranked if s in case.services]
