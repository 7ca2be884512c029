"""The layering contracts in pyproject.toml hold (import-linter), and the SDK-facing proto
package never reaches into the server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint_imports)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_proto_package_does_not_import_the_server_or_psycopg() -> None:
    code = (
        "import sys, taskqueue_proto.v1.taskqueue_pb2_grpc, taskqueue_proto.v1.admin_pb2_grpc;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('taskqueue', 'psycopg')];"
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
