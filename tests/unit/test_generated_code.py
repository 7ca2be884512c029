"""The committed protobuf code is exactly what the .proto files generate."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

PROTO_ROOT = Path(__file__).resolve().parents[2] / "proto"


def test_generated_code_matches_the_proto_files(tmp_path: Path) -> None:
    if shutil.which("protoc-gen-mypy", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("mypy-protobuf is missing: install the dev extras (pip install -e '.[dev]')")
    sys.path.insert(0, str(PROTO_ROOT))
    try:
        from generate import generate
    finally:
        sys.path.remove(str(PROTO_ROOT))
    generate(tmp_path)
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert generated, "nothing was generated"
    for rel in generated:
        committed = PROTO_ROOT / rel
        assert committed.exists(), f"{rel} is generated but not committed"
        assert (tmp_path / rel).read_text() == committed.read_text(), (
            f"{rel} differs from what the .proto files generate; run `python proto/generate.py`"
        )
