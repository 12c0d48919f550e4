# Hindsight service image. `docker compose up` runs it with PostgreSQL (pgvector) and Redis
# (AOF); see docker-compose.yml. With no HINDSIGHT_DATABASE_URL / HINDSIGHT_REDIS_URL it
# would start embedded servers in HINDSIGHT_DATA_DIR instead.

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md alembic.ini ./
COPY src ./src
COPY migrations ./migrations
COPY sql ./sql
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 hindsight
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER hindsight
ENV HINDSIGHT_HOST=0.0.0.0 \
    HINDSIGHT_PORT=8080 \
    HINDSIGHT_DATA_DIR=/home/hindsight/data \
    PYTHONUNBUFFERED=1
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=2)"
# `serve` waits for nothing itself: compose starts it once both stores are healthy. It runs
# `alembic upgrade head` under an advisory lock (replicas take turns), then serves.
CMD ["hindsight", "serve"]
