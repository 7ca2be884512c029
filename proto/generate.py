"""Regenerate the Python code for the .proto files in this folder.

The include root is this folder, which mirrors the Python package (`taskqueue_proto.v1`), so the
generated imports resolve as they are written, with no rewriting. Run: `python proto/generate.py`.
"""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent


def generate(out_dir: Path = ROOT) -> None:
    """Write *_pb2.py, *_pb2_grpc.py and their .pyi stubs for every .proto into out_dir."""
    protos = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "taskqueue_proto").rglob("*.proto"))
    well_known = str(resources.files("grpc_tools") / "_proto")
    plugin_dir = Path(sys.executable).parent
    args = [
        "protoc",
        f"-I{ROOT}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--plugin=protoc-gen-mypy={plugin_dir / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={plugin_dir / 'protoc-gen-mypy_grpc'}",
        f"--mypy_out={out_dir}",
        f"--mypy_grpc_out={out_dir}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


if __name__ == "__main__":
    if shutil.which("protoc-gen-mypy", path=str(Path(sys.executable).parent)) is None:
        raise SystemExit("mypy-protobuf is not installed in this environment (pip install mypy-protobuf)")
    generate()
