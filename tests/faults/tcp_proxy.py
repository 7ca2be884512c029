"""A small TCP proxy the harness controls: it forwards connections and can stall them (hold every
byte for a while, like a frozen network) or cut them (close every connection at once)."""

from __future__ import annotations

import asyncio
import contextlib
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._flowing = asyncio.Event()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.AbstractServer | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(ready,), daemon=True, name="tcp-proxy")
        self._thread.start()
        ready.wait(10)

    def _main(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._flowing.set()
        self._server = self._loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        ready.set()
        self._loop.run_forever()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(
            self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True
        )
        for w in (writer, up_writer):
            self._writers.discard(w)
            w.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def stall(self) -> None:
        """Stop forwarding (connections stay open, bytes wait) until resume()."""
        self._loop.call_soon_threadsafe(self._flowing.clear)

    def resume(self) -> None:
        self._loop.call_soon_threadsafe(self._flowing.set)

    def cut(self) -> None:
        """Close every open connection through the proxy (new ones are accepted again at once)."""

        def close_all() -> None:
            for w in list(self._writers):
                with contextlib.suppress(Exception):
                    w.transport.abort()
            self._writers.clear()

        self._loop.call_soon_threadsafe(close_all)

    def close(self) -> None:
        def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for w in list(self._writers):
                w.transport.abort()
            self._loop.stop()

        self._loop.call_soon_threadsafe(shutdown)
        self._thread.join(5)
