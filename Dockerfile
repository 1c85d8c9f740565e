# berth's scheduler image: `berth schedule run --config /etc/berth/config.yaml` (see
# docs/deploying-the-scheduler.md and `berth schedule manifests`). Build from the repository root:
#   docker build -t berth-scheduler:0.1.0 .

# Both stages use python:3.11-slim pinned by digest (its multi-platform index as published), so a rebuild gets the
# same bytes; move both deliberately (`docker buildx imagetools inspect python:3.11-slim` shows the current one).
# Stage 1: build a wheel of berth (no compilers needed: every dependency ships wheels).
FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7 AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in README.md LICENSE ./
COPY src ./src
COPY charts/berth-scheduler ./charts/berth-scheduler
COPY examples/two-profiles ./examples/two-profiles
RUN pip wheel --wheel-dir /wheels .

# Stage 2: the runtime, with berth and its dependencies installed from the wheels only.
FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels /wheels
RUN pip install --no-index --find-links /wheels berth \
    && rm -rf /wheels \
    && groupadd --system --gid 10001 berth \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin berth
# Numeric, so a pod's `runAsNonRoot: true` can be verified by the kubelet.
USER 10001:10001
WORKDIR /
EXPOSE 10259
ENTRYPOINT ["berth"]
CMD ["schedule", "run", "--config", "/etc/berth/config.yaml"]
