# The taskqueue server image (docker-compose.yml runs it beside PostgreSQL).
FROM python:3.11-slim
WORKDIR /app
COPY proto/ proto/
COPY src/ src/
COPY migrations/ migrations/
COPY pyproject.toml alembic.ini README.md ./
RUN pip install --no-cache-dir -e ./proto -e .
EXPOSE 50051
# Migrations are idempotent: apply them, then serve.
CMD ["sh", "-c", "taskqueue migrate && exec taskqueue serve --listen 0.0.0.0:50051"]
