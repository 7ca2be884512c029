"""An example worker: `taskqueue-worker examples.email_worker:worker`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from taskqueue_sdk import Permanent, TaskContext, Worker

worker = Worker(queues=["emails"], concurrency=16)


@dataclass
class Email:
    to: str
    subject: str
    body: str = ""


@worker.task("send_email", model=Email)
async def send_email(email: Email, ctx: TaskContext) -> dict[str, object]:
    if "@" not in email.to:
        raise Permanent(f"not an email address: {email.to!r}")  # retrying cannot fix this
    await asyncio.sleep(0.001)  # stands in for talking to the mail server
    return {"delivered_to": email.to, "attempt": ctx.attempt}
