# berth's scheduler image: `berth schedule run --config /etc/berth/config.yaml` (see
# docs/deploying-the-scheduler.md and `berth schedule manifests`). Build from the repository root:
#   docker build -t berth-scheduler:0.1.0 .

# Stage 1: build a wheel of berth (no compilers needed: every dependency ships wheels).
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --wheel-dir /wheels .

# Stage 2: the runtime, with berth and its dependencies installed from the wheels only.
FROM python:3.11-slim
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
