"""The page tool connects to the very address it checked: a host name whose DNS answer changes
between the check and the connection (DNS rebinding) never reaches the local server it names
the second time, on the first request or after a redirect; a checked host is still fetched,
under its own name."""

from __future__ import annotations

import socket
import threading
import unittest
from collections.abc import Iterator
from typing import Any
from unittest import mock

from datbench_cli.benchmarks.vistoolbench.agent import web
from tests.batch.test_send_hardening import bounded, http_head
from tests.raw_server import RawServer

_REAL_GETADDRINFO = socket.getaddrinfo
_BODY = b"<html><title>t</title><p>secret</p></html>"


def answer(conn: socket.socket) -> None:
    conn.sendall(http_head("200 OK", f"Content-Length: {len(_BODY)}") + _BODY)


def resolver(names: dict[str, Iterator[str]]) -> Any:
    """A getaddrinfo answering each name in ``names`` with its next address (others as ever)."""

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in names:
            return _REAL_GETADDRINFO(host, port, *args, **kwargs)
        address = next(names[host])
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 0)))]

    return mock.patch.object(socket, "getaddrinfo", getaddrinfo)


def only(allowed: str) -> Any:
    """The public-address check, accepting ``allowed`` alone (a stand-in public address)."""
    return mock.patch.object(web, "_is_public", lambda address: address == allowed)


def rebinding() -> Iterator[str]:
    """127.0.0.2 (allowed) at the first lookup, 127.0.0.1 (the local server) after it."""
    yield "127.0.0.2"
    while True:
        yield "127.0.0.1"


class WebRebindingTests(unittest.TestCase):
    def test_a_rebinding_host_never_reaches_the_local_server(self) -> None:
        with RawServer(answer) as server, resolver({"rebind.test": rebinding()}), only("127.0.0.2"):
            page = bounded(self, 20, lambda: web.page_text(f"http://rebind.test:{server.port}/"))
        self.assertEqual(page["status"], "error")
        self.assertEqual(page["text"], "")
        self.assertEqual(server.connections, 0)

    def test_a_redirect_to_a_rebinding_host_never_reaches_the_local_server(self) -> None:
        with RawServer(answer) as target:

            def redirect(conn: socket.socket) -> None:
                where = f"Location: http://rebind.test:{target.port}/"
                conn.sendall(http_head("302 Found", where, "Content-Length: 0"))

            names = {"start.test": iter(["127.0.0.2"] * 5), "rebind.test": rebinding()}
            start_server = RawServer(redirect, host="127.0.0.2")
            with start_server as start, resolver(names), only("127.0.0.2"):
                page = bounded(self, 20, lambda: web.page_text(f"http://start.test:{start.port}/"))
        self.assertEqual(page["status"], "error")
        self.assertEqual(target.connections, 0)

    def test_a_checked_host_is_fetched_under_its_name(self) -> None:
        always = iter(["127.0.0.1"] * 5)
        with RawServer(answer) as server, resolver({"site.test": always}), only("127.0.0.1"):
            port = server.port
            page = bounded(self, 20, lambda: web.page_text(f"http://site.test:{port}/"))
        self.assertEqual(page["status"], "success", page)
        self.assertIn("secret", page["text"])
        self.assertIn(f"Host: site.test:{port}".encode(), server.requests[0])

    def test_a_private_host_is_refused(self) -> None:
        with RawServer(answer) as server, resolver({"local.test": iter(["127.0.0.1"] * 5)}):
            page = bounded(self, 20, lambda: web.page_text(f"http://local.test:{server.port}/"))
        self.assertEqual(page["status"], "error")
        self.assertIn("not a public address", page["error"])
        self.assertEqual(server.connections, 0)

    def test_other_schemes_are_refused(self) -> None:
        for url in ("file:///etc/passwd", "ftp://example.com/x"):
            page = web.page_text(url)
            self.assertEqual(page["status"], "error", url)
            self.assertIn("only http and https", page["error"])


class WebTlsNameTests(unittest.TestCase):
    def test_an_https_fetch_names_the_host_in_tls_at_the_checked_address(self) -> None:
        """The TLS hello (SNI) to the checked address carries the host's name; no certificate
        is offered, so the fetch then fails, as an unverified one must."""
        hellos: list[bytes] = []
        listener = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(10)
                hellos.append(conn.recv(65536))

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        with resolver({"tls.test": iter(["127.0.0.1"] * 5)}), only("127.0.0.1"):
            page = bounded(self, 20, lambda: web.page_text(f"https://tls.test:{port}/"))
        thread.join(10)
        self.assertEqual(page["status"], "error")
        self.assertEqual(len(hellos), 1)
        self.assertIn(b"tls.test", hellos[0])
