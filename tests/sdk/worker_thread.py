"""Run a Worker on its own event loop in a thread of the test process."""

from __future__ import annotations

import asyncio
import threading

from taskqueue_sdk import Worker


class WorkerThread:
    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.loop = asyncio.new_event_loop()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="worker", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self.loop.run_until_complete(self.worker.run())
        except BaseException as e:  # surfaced by stop()
            self.error = e
        finally:
            self.loop.close()

    def stop(self, timeout: float = 20) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.worker.stop)
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the worker did not stop"
        if self.error is not None:
            raise self.error
