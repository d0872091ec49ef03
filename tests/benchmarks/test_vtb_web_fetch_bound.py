"""The agent's web tools bound a whole fetch in time: a server trickling its body one byte at
a time (each read inside the socket timeout) is cut, and the tool answers with an error."""

from __future__ import annotations

import socket
import time
import unittest
from unittest import mock

from datbench_cli.benchmarks.vistoolbench.agent import web
from tests.batch.test_send_hardening import bounded, http_head
from tests.raw_server import RawServer


def trickle(conn: socket.socket) -> None:
    conn.sendall(http_head("200 OK", "Content-Type: text/html", "Content-Length: 100000"))
    for _ in range(100000):
        conn.sendall(b"x")
        time.sleep(0.05)


class WebFetchBoundTests(unittest.TestCase):
    def test_a_trickled_page_is_cut_at_the_fetch_bound(self) -> None:
        with (
            RawServer(trickle) as server,
            mock.patch.object(web, "_FETCH_SECONDS", 0.5),
            mock.patch.object(web, "_is_public", lambda address: True),  # 127.0.0.1 allowed
        ):
            url = f"http://127.0.0.1:{server.port}/page"
            with self.assertRaises(TimeoutError):
                bounded(self, 20, lambda: web._get(url, check_public=False))
            page = bounded(self, 20, lambda: web.page_text(url))
        self.assertEqual(page["status"], "error")
        self.assertIn("0.5 s", page["error"])

    def test_a_whole_page_is_read(self) -> None:
        body = b"<html><title>t</title><p>hello world</p></html>"

        def answer(conn: socket.socket) -> None:
            conn.sendall(http_head("200 OK", f"Content-Length: {len(body)}") + body)

        with RawServer(answer) as server:
            data = bounded(self, 20, lambda: web._get(f"http://127.0.0.1:{server.port}/",
                                                      check_public=False))  # fmt: skip
        self.assertEqual(data, body)
