"""Property-based fuzzing of every RPC: random, huge and empty values, bad UTF-8 and JSON,
extreme numbers, unknown enum values, garbage and oversized messages. The server must answer a
client-error status with a message, never INTERNAL, never crash, and stay healthy.

FUZZ_EXAMPLES sets the examples per RPC (CI: a few hundred; the long run in the README: 10,000).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.server import InProcessServer

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    derandomize=os.environ.get("FUZZ_RANDOM") != "1",
)
CLIENT_ERRORS = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
SEEN: Counter[str] = Counter()

INT32 = st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from([0, 1, -1, 2**31 - 1, -(2**31)]))
INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, -1, 2**63 - 1, -(2**63)]))
TEXT = st.one_of(
    st.text(max_size=40),
    st.text(min_size=100, max_size=400),
    st.sampled_from(["", " ", "default", "q", "a b", "\x00", "é", "🚀" * 50, "x" * 129, "x" * 5000]),
)
UUIDISH = st.one_of(TEXT, st.uuids().map(str), st.sampled_from(["0" * 36, "{" + "0" * 32 + "}", "-" * 36]))
JSONISH = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"", b"null", b"{}", b"[]", b"NaN", b"Infinity", b'"\\u0000"', b'"\\ud800"', b"\xff\xfe",
                     b"[" * 5000, b'{"a": 1}', b"1e999999", b'"' + b"x" * 300_000 + b'"']),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=10,
    ).map(lambda v: json.dumps(v).encode()),
)  # fmt: skip
DURATION = st.builds(Duration, seconds=INT64, nanos=INT32)
TIMESTAMP = st.builds(Timestamp, seconds=INT64, nanos=INT32)


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def new_tasks(draw: st.DrawFn) -> pb.NewTask:
    task = pb.NewTask(
        queue=draw(TEXT), type=draw(TEXT), payload=draw(JSONISH), priority=draw(INT32),
        max_attempts=draw(INT32), idempotency_key=draw(TEXT),
    )  # fmt: skip
    for name, strategy in (("delay", DURATION), ("run_at", TIMESTAMP), ("timeout", DURATION),
                           ("backoff_base", DURATION), ("backoff_cap", DURATION)):  # fmt: skip
        value = draw(_opt(strategy))
        if value is not None:
            getattr(task, name).CopyFrom(value)
    return task


def _with_durations(msg: Any, draw: st.DrawFn, *names: str) -> Any:
    for name in names:
        value = draw(_opt(DURATION))
        if value is not None:
            getattr(msg, name).CopyFrom(value)
    return msg


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, Any]:
    return draw(st.one_of(worker_requests(), admin_requests()))


@st.composite
def worker_requests(draw: st.DrawFn) -> tuple[str, Any]:
    refs = st.lists(st.builds(pb.LeaseRef, task_id=UUIDISH, lease_id=UUIDISH), max_size=5)
    choice = draw(st.sampled_from(
        ["Enqueue", "Lease", "Heartbeat", "Complete", "Fail", "Release", "GetTask", "CancelTask"]
    ))  # fmt: skip
    if choice == "Enqueue":
        return choice, pb.EnqueueRequest(tasks=draw(st.lists(new_tasks(), max_size=4)))
    if choice == "Lease":
        msg = pb.LeaseRequest(worker_id=draw(TEXT), queues=draw(st.lists(TEXT, max_size=4)),
                              task_types=draw(st.lists(TEXT, max_size=3)), max_tasks=draw(INT32))  # fmt: skip
        _with_durations(msg, draw, "lease_duration")
        if draw(st.booleans()):
            msg.wait.CopyFrom(
                Duration(seconds=draw(st.integers(-5, 1)), nanos=draw(st.integers(-(10**9), 10**9)))
            )
        return choice, msg
    if choice == "Heartbeat":
        return choice, _with_durations(
            pb.HeartbeatRequest(worker_id=draw(TEXT), leases=draw(refs)), draw, "lease_duration"
        )
    if choice == "Complete":
        items = st.lists(
            st.builds(pb.Completion, task_id=UUIDISH, lease_id=UUIDISH, result=JSONISH), max_size=4
        )
        return choice, pb.CompleteRequest(worker_id=draw(TEXT), completions=draw(items))
    if choice == "Fail":
        items = st.lists(st.builds(pb.Failure, task_id=UUIDISH, lease_id=UUIDISH, error=TEXT,
                                   permanent=st.booleans(), retry_after=DURATION), max_size=4)  # fmt: skip
        return choice, pb.FailRequest(worker_id=draw(TEXT), failures=draw(items))
    if choice == "Release":
        return choice, pb.ReleaseRequest(worker_id=draw(TEXT), leases=draw(refs))
    if choice in ("GetTask", "CancelTask"):
        cls = pb.GetTaskRequest if choice == "GetTask" else pb.CancelTaskRequest
        return choice, cls(task_id=draw(UUIDISH))
    raise AssertionError(choice)


@st.composite
def admin_requests(draw: st.DrawFn) -> tuple[str, Any]:
    choice = draw(st.sampled_from(["ListTasks", "RequeueDead", "PurgeTasks", "QueueStats"]))
    flt = admin_pb.TaskFilter(
        queue=draw(TEXT), type=draw(TEXT), status=draw(INT32), error_contains=draw(TEXT)
    )
    if draw(st.booleans()):
        flt.created_after.CopyFrom(draw(TIMESTAMP))
    if choice == "ListTasks":
        return choice, admin_pb.ListTasksRequest(filter=flt, page_size=draw(INT32), page_token=draw(TEXT))
    if choice == "RequeueDead":
        return choice, admin_pb.RequeueDeadRequest(task_ids=draw(st.lists(UUIDISH, max_size=3)), filter=flt,
                                                   dry_run=True, limit=draw(INT32))  # fmt: skip
    if choice == "PurgeTasks":
        return choice, admin_pb.PurgeTasksRequest(filter=flt, dry_run=True)
    return choice, admin_pb.QueueStatsRequest(queue=draw(TEXT))


def _call(server: InProcessServer, method: str, request: Any) -> None:
    stub: Any = (
        server.admin if method in ("ListTasks", "RequeueDead", "PurgeTasks", "QueueStats") else server.tasks
    )
    try:
        getattr(stub, method)(request, timeout=30)
        SEEN["OK"] += 1
    except grpc.RpcError as e:
        SEEN[e.code().name] += 1
        assert e.code() in CLIENT_ERRORS, f"{method}: {e.code().name}: {e.details()}"
        assert e.details(), f"{method}: {e.code().name} without a message"


@FUZZ
@given(call=requests())
def test_every_rpc_answers_bad_input_with_a_client_error(
    server: InProcessServer, call: tuple[str, Any]
) -> None:
    _call(server, *call)


@st.composite
def wire_bytes(draw: st.DrawFn) -> bytes:
    """Raw protobuf-ish bytes: valid tags with garbage values, invalid UTF-8 in string fields."""
    out = bytearray()
    for _ in range(draw(st.integers(0, 6))):
        field_number = draw(st.integers(1, 25))
        kind = draw(st.sampled_from(["varint", "len", "garbage"]))
        if kind == "varint":
            out += bytes([field_number << 3]) + draw(st.binary(min_size=1, max_size=10))
        elif kind == "len":
            body = draw(st.one_of(st.binary(max_size=50), st.just(b"\xff\xfe\xfd"), st.just(b"\xc3\x28")))
            out += bytes([(field_number << 3) | 2, len(body)]) + body
        else:
            out += draw(st.binary(max_size=30))
    return bytes(out)


WORKER_METHODS = ("Enqueue", "Lease", "Heartbeat", "Complete", "Fail", "Release", "GetTask", "CancelTask")
ADMIN_METHODS = ("ListTasks", "RequeueDead", "PurgeTasks", "QueueStats")
METHODS = [f"/taskqueue.v1.TaskQueue/{m}" for m in WORKER_METHODS] + [
    f"/taskqueue.v1.Admin/{m}" for m in ADMIN_METHODS
]


@FUZZ
@given(method=st.sampled_from(METHODS), body=wire_bytes())
def test_garbage_and_bad_utf8_on_the_wire_is_a_client_error(
    server: InProcessServer, method: str, body: bytes
) -> None:
    call: Callable[..., Any] = server.channel.unary_unary(
        method, request_serializer=None, response_deserializer=None
    )
    try:
        call(body, timeout=30)
        SEEN["OK"] += 1
    except grpc.RpcError as e:
        SEEN[e.code().name] += 1
        assert e.code() in CLIENT_ERRORS, f"{method}: {e.code().name}: {e.details()}"


def test_oversized_message_is_refused_and_the_server_stays_healthy(server: InProcessServer) -> None:
    huge = pb.EnqueueRequest(
        tasks=[pb.NewTask(queue="q", type="t", payload=b'"' + b"x" * (17 * 1024 * 1024) + b'"')]
    )
    with pytest.raises(grpc.RpcError) as caught:
        server.tasks.Enqueue(huge, timeout=30)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    reply = server.health.Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    print(f"\nfuzz answers by status: {dict(SEEN)} (total {sum(SEEN.values())})")
