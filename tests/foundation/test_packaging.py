"""The non-editable install: the wheel the Dockerfile builds holds every module and every
data file the code loads, and building it prints no packaging warning.

The editable install (`make install`) finds files in the source tree whatever pyproject
says, so a package left out of `packages` (as `stackgraph.rca.scorers` once was) or a data
folder left out of `package-data` only shows in a real wheel. This builds one from what the
Dockerfile's build stage copies, as `pip install .` there does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser
from sgtest import REPO, package_dirs

NOT_SHIPPED = {
    "stackgraph/web/screenshots": "the README's pictures of the web UI",
    "eval/baselines/REQUIREMENTS.txt": "how to install BARO's packages, for a reader",
}
"""Files under the package folders that no code loads, with why they stay out."""
WARNINGS = ("would be ignored", "absent from the `packages`", "Warning: ", "deprecated")


def build_stage_copies() -> list[str]:
    """The sources the Dockerfile's first stage copies into its build context."""
    parser = DockerfileParser(path=str(REPO / "Dockerfile"))
    froms = [i["startline"] for i in parser.structure if i["instruction"] == "FROM"]
    copies = [i["value"].split() for i in parser.structure
              if i["instruction"] == "COPY" and froms[0] < i["startline"] < froms[1]]  # fmt: skip
    return [src for value in copies for src in value[:-1] if not src.startswith("--")]


def expected_files() -> set[str]:
    """Wheel paths of every file under the package folders, bar NOT_SHIPPED."""
    out = set()
    for prefix, folder in package_dirs().items():
        for path in folder.rglob("*"):
            rel = path.relative_to(REPO).as_posix()
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            if any(rel == skip or rel.startswith(skip + "/") for skip in NOT_SHIPPED):
                continue
            out.add("/".join([*prefix.split("."), path.relative_to(folder).as_posix()]))
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[zipfile.ZipFile, str]:
    src, dist = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for name in build_stage_copies():
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, src / name)
    # without isolation: the venv's setuptools (the dev extra pins it), no index needed
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
         "-v", "-w", str(dist)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    (built,) = dist.glob("stackgraph-*.whl")
    return zipfile.ZipFile(built), log


def test_the_wheel_holds_every_module_and_data_file(wheel: tuple[zipfile.ZipFile, str]) -> None:
    names = set(wheel[0].namelist())
    expected = expected_files()
    assert "stackgraph/rca/scorers/logs.py" in expected
    assert {"stackgraph/api/lua/incidents.lua", "stackgraph/web/static/ui.css",
            "stackgraph/cypher/rca_onehop.cypher"} <= expected  # fmt: skip
    missing = sorted(expected - names)
    assert missing == [], f"{len(missing)} file(s) missing from the wheel: {missing[:20]}"
    assert not any(n.startswith("stackgraph/web/screenshots/") for n in names)


def test_the_wheel_registers_the_demo_command(wheel: tuple[zipfile.ZipFile, str]) -> None:
    (entry,) = [n for n in wheel[0].namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel[0].read(entry).decode()
    assert "[stackgraph.commands]\ndemo = stackgraph.demo.command:demo" in text
    assert "[console_scripts]\nstackgraph = stackgraph.cli:main" in text


def test_building_it_prints_no_packaging_warning(wheel: tuple[zipfile.ZipFile, str]) -> None:
    noisy = [line for line in wheel[1].splitlines() if any(w in line for w in WARNINGS)]
    assert noisy == [], "\n".join(noisy[:20])


def test_the_package_folders_are_what_the_dockerfile_copies() -> None:
    roots = {Path(f).relative_to(REPO).parts[0] for f in package_dirs().values()}
    assert roots <= set(build_stage_copies())
