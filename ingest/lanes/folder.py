"""Files under a folder a user named, and never through a link out of it.

A manifests or span folder may hold symlinks to `/etc/shadow` or `/proc/self/environ`, or a
linked folder elsewhere: reading them would ingest what the folder's author may not read.
So a file is read only if its real path lies inside the folder's real path; one that does
not is handed back for the caller to report.

    files, outside = files_under(Path("deploy/"), lambda p: p.suffix == ".yaml")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["files_under", "is_inside"]


def is_inside(path: Path, root: Path) -> bool:
    """`path`'s real path (links followed) lies under `root`'s."""
    return path.resolve().is_relative_to(root.resolve())


def files_under(root: Path, wanted: Callable[[Path], bool]) -> tuple[list[Path], list[Path]]:
    """Files under `root` that are `wanted` (by name), sorted, hidden files and folders
    left out; and, apart, those that link out of `root`."""
    real = root.resolve()
    files: list[Path] = []
    outside: list[Path] = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if not wanted(p) or any(s.startswith(".") for s in rel.parts):
            continue
        if not p.resolve().is_relative_to(real):
            outside.append(p)
        elif p.is_file():
            files.append(p)
    return files, outside
