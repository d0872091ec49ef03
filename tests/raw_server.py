"""A bare TCP server on 127.0.0.1 for misbehaving-HTTP tests: each connection's request is read
whole, then ``respond(sock)`` writes whatever the test wants (a dribble, an endless body, a
redirect). Every request it read is kept in ``requests`` (raw bytes, headers and body)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class RawServer:
    """Runs ``respond`` for every connection in its own thread; a context manager. ``port``: the
    port to listen on (default: a free one), e.g. that of a server that stopped; ``host``: the
    loopback address to listen on."""

    def __init__(
        self, respond: Callable[[socket.socket], None], port: int = 0, host: str = "127.0.0.1"
    ) -> None:
        self.respond = respond
        self.requests: list[bytes] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.create_server((host, port))
        self._sock.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop_listening(self) -> None:
        """Refuse every later connection (as a server that went away does)."""
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(5)
        self._sock.close()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                request = _read_request(conn)
                with self._lock:
                    self.connections += 1
                    if request:
                        self.requests.append(request)
                if request:
                    self.respond(conn)
            except OSError:
                pass  # the client gave up: what these tests want
