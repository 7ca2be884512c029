"""An example producer: enqueue `send_email` tasks in batches, then wait for all of them.

python examples/producer.py --count 1000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from taskqueue_sdk import AsyncClient, TaskFailed, TaskSpec


async def main(count: int, batch: int, address: str | None) -> int:
    async with AsyncClient(address, timeout=30) as client:
        started = time.monotonic()
        ids: list[str] = []
        for first in range(0, count, batch):
            specs = [
                TaskSpec(
                    "send_email",
                    {"to": f"user{i}@example.com", "subject": f"Hello #{i}"},
                    queue="emails",
                )
                for i in range(first, min(first + batch, count))
            ]
            ids += [r.task_id for r in await client.enqueue_many(specs)]
        print(f"enqueued {len(ids)} tasks in {time.monotonic() - started:.2f}s")

        limit = asyncio.Semaphore(50)

        async def wait_one(task_id: str) -> bool:
            async with limit:
                try:
                    await client.wait(task_id, timeout=120)
                    return True
                except TaskFailed as e:
                    print(f"{task_id}: {e.error}", file=sys.stderr)
                    return False

        results = await asyncio.gather(*(wait_one(i) for i in ids))
        print(
            f"{sum(results)} succeeded, {len(results) - sum(results)} failed "
            f"in {time.monotonic() - started:.2f}s"
        )
        return 0 if all(results) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--address", help="server host:port (default: TASKQUEUE_ADDRESS or 127.0.0.1:50051)")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.count, args.batch, args.address)))
