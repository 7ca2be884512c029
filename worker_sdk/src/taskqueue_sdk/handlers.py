"""Registered handlers, and running one on a task: sync or async, with its timeout, to an Outcome."""

from __future__ import annotations

import asyncio
import inspect
import json
import traceback
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from taskqueue_sdk.context import TaskContext
from taskqueue_sdk.errors import Permanent

Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Registration:
    handler: Handler
    model: Callable[..., Any] | None
    takes_context: bool
    is_async: bool


@dataclass(slots=True)
class Outcome:
    """What to report: success with a result, or a failure (retryable or permanent).

    `report=False` when the attempt was stopped because its lease is gone: nothing to report."""

    succeeded: bool
    result_json: bytes = b""
    error: str = ""
    permanent: bool = False
    report: bool = True


def register(handler: Handler, model: Callable[..., Any] | None) -> Registration:
    params = [
        p
        for p in inspect.signature(handler).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if not 1 <= len(params) <= 2:
        raise TypeError(f"handler {handler.__name__} must take (payload) or (payload, ctx)")
    return Registration(handler, model, len(params) == 2, inspect.iscoroutinefunction(handler))


def _describe(error: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    return text or type(error).__name__


def _build_input(reg: Registration, payload: Any) -> Any:
    if reg.model is None:
        return payload
    validate = getattr(reg.model, "model_validate", None)  # pydantic models
    if validate is not None:
        return validate(payload)
    return reg.model(**payload) if isinstance(payload, dict) else reg.model(payload)


async def run_handler(
    reg: Registration,
    payload_json: bytes,
    ctx: TaskContext,
    timeout: float | None,
    executor: Executor | None,
    non_retryable: tuple[type[BaseException], ...] = (),
) -> Outcome:
    """Run the handler once and say what to report. Never raises for the handler's own errors."""
    try:
        payload = json.loads(payload_json) if payload_json else None
        arg = _build_input(reg, payload)
    except Exception as e:
        return Outcome(
            False, error=f"payload does not fit {reg.handler.__name__}: {_describe(e)}", permanent=True
        )
    args = (arg, ctx) if reg.takes_context else (arg,)
    try:
        # The handler runs in this very task (no extra tasks per call): the runtime cancels this
        # task to stop an async handler, and asyncio.timeout turns the deadline into TimeoutError.
        async with asyncio.timeout(timeout):
            if reg.is_async:
                result = await reg.handler(*args)
            else:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(executor, lambda: reg.handler(*args))
    except TimeoutError:
        ctx._stop("timeout")  # a sync handler's thread runs on; ctx.cancelled tells it to stop
        return Outcome(False, error=f"timed out after {timeout:g}s")
    except asyncio.CancelledError:
        if ctx.stop_reason == "cancel requested":
            return Outcome(False, error="cancelled while running", permanent=True)
        if ctx.stop_reason:
            return Outcome(False, error=f"stopped: {ctx.stop_reason}", report=False)
        raise
    except Permanent as e:
        cause = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], BaseException) else e
        return Outcome(False, error=_describe(cause), permanent=True)
    except non_retryable as e:
        return Outcome(False, error=_describe(e), permanent=True)
    except Exception as e:
        return Outcome(False, error=_describe(e))
    if ctx.stop_reason == "cancel requested":
        # A sync handler that saw ctx.cancelled and returned early did not finish the work.
        return Outcome(False, error="cancelled while running", permanent=True)
    try:
        body = json.dumps(result, separators=(",", ":")).encode() if result is not None else b""
    except (TypeError, ValueError) as e:
        return Outcome(False, error=f"result is not JSON-serialisable: {_describe(e)}", permanent=True)
    return Outcome(True, result_json=body)
