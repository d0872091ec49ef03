"""One HTTP POST with a deadline on the whole exchange and a cap on the answer's size.

Built on ``httpcore2`` (the transport layer of ``httpx2``): a connection pool with keep-alive,
HTTP/1.1 parsing, TLS with the system's trust store, ``HTTP(S)_PROXY``/``NO_PROXY`` proxies (a
``user:password@`` in the proxy's URL is sent to the proxy as Basic auth) and typed errors; it
never follows a redirect. Its timeouts bound each socket operation, so a server
sending one byte a second would hold a request for ever; the network backend here gives every
connect, read and write only what is left of the request's deadline, so ``timeout`` bounds the
whole exchange, from connecting to the answer's last byte (name resolution aside), and a
connection only :data:`CONNECT_SECONDS` of it.

A server that cannot be connected to before any connection to it succeeded (refused, an unknown
host, no answer to the connection) is ``unreachable``: a wrong URL or a server not started, which
no retry mends. Once a connection succeeded, the same failure is a ``connect_error`` (a server
restarting), for the caller to retry.
"""

from __future__ import annotations

import threading
import time
import urllib.request
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit, urlunsplit

import httpcore2

from datbench_cli.batch.endpoint import shown_url
from datbench_cli.errors import UsageError

_state = threading.local()
# The longest wait for a connection to be accepted (within the request's deadline): a host that
# drops the connection attempts (a wrong address, a firewall) is told in seconds, not at the end
# of --timeout; time for the 5 tries the kernel makes in 30 s (the OpenAI SDK waits 5 s).
CONNECT_SECONDS = 30.0


def _remaining(timeout: float | None) -> float:
    """``timeout`` cut to what is left of this thread's deadline; raises when nothing is."""
    deadline: float | None = getattr(_state, "deadline", None)
    if deadline is None:
        return timeout if timeout is not None else 600.0
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore2.ReadTimeout("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _remaining(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _remaining(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout=None):  # type: ignore[no-untyped-def]
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _remaining(timeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.SyncBackend):
    """Connections bounded by the request's deadline and :data:`CONNECT_SECONDS`;
    ``connected`` once one of them succeeded."""

    connected = False

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        wait = min(_remaining(timeout), CONNECT_SECONDS)
        stream = super().connect_tcp(host, port, wait, local_address, socket_options)
        self.connected = True
        return _DeadlineStream(stream)


@dataclass
class Answer:
    """What came back: a status and body, or ``problem`` and ``code`` when nothing usable did;
    ``proxy``: the proxy (shown without credentials) a failed connection went through."""

    status: int | None = None
    body: bytes = b""
    headers: dict[str, str] | None = None
    problem: str | None = None
    code: str | None = None
    proxy: str | None = None


def _proxy_for(url: str) -> tuple[str, tuple[bytes, bytes] | None] | None:
    """The proxy for ``url`` from the environment (``None``: connect directly), as its URL
    without credentials and the ``(user, password)`` its URL carried, if any (``user:pass@``,
    sent to the proxy as Basic auth, as curl and requests do)."""
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.netloc):
        return None
    if not proxy.startswith(("http://", "https://")):
        raise UsageError(
            f"only http:// and https:// proxies are supported, got {shown_url(proxy)!r}"
        )
    found = urlsplit(proxy)
    if "@" not in found.netloc:
        return proxy, None
    userinfo, _, host = found.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    auth = (unquote_to_bytes(user), unquote_to_bytes(password))
    return urlunsplit(found._replace(netloc=host)), auth


class Transport:
    """A connection pool for one server (through its proxy, if the environment names one)."""

    def __init__(self, base_url: str, connections: int) -> None:
        proxy = _proxy_for(base_url)
        self._backend = _DeadlineBackend()
        self._proxy = proxy[0] if proxy else None
        options: dict[str, Any] = {
            "max_connections": connections,
            "network_backend": self._backend,
        }
        self._pool: httpcore2.ConnectionPool | httpcore2.HTTPProxy = (
            httpcore2.HTTPProxy(proxy_url=proxy[0], proxy_auth=proxy[1], **options)
            if proxy
            else httpcore2.ConnectionPool(**options)
        )

    def close(self) -> None:
        self._pool.close()

    def post(
        self, url: str, headers: dict[str, str], data: bytes, timeout: float, max_bytes: int
    ) -> Answer:
        """POST ``data``; the whole exchange ends within ``timeout`` seconds and reads at most
        ``max_bytes`` of (decoded) body."""
        _state.deadline = time.monotonic() + timeout
        limits = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        try:
            with self._pool.stream(
                "POST", url, headers=list(headers.items()), content=data,
                extensions={"timeout": limits},
            ) as reply:  # fmt: skip
                found = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in reply.headers}
                body = _read_body(reply.iter_stream(), found, max_bytes)
                if body is None:
                    large = Answer(
                        reply.status,
                        headers=found,
                        problem=f"the answer is larger than {max_bytes:,} bytes",
                        code="response_too_large",
                    )
                    return _without_key(large, headers)
                # A 200's body is the model's answer, kept as it came; its headers (the
                # request id written to the output) are not.
                ok = reply.status == 200
                return _without_key(Answer(reply.status, body, found), headers, keep_body=ok)
        except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
            return self._not_connected(exc, min(timeout, CONNECT_SECONDS))
        except httpcore2.ProxyError as exc:  # the proxy refused the tunnel (e.g. 407)
            reason = str(exc) or type(exc).__name__
            return Answer(
                problem=f"cannot connect through the proxy ({reason})", code="connect_error"
            )
        except httpcore2.TimeoutException:
            return Answer(problem=f"no whole answer within {timeout:g} s", code="timeout")
        except (httpcore2.NetworkError, httpcore2.ProtocolError) as exc:
            reason = str(exc) or type(exc).__name__
            return Answer(problem=f"connection dropped ({reason})", code="connection_error")
        except zlib.error as exc:
            return Answer(problem=f"undecodable compressed answer ({exc})", code="invalid_response")
        finally:
            _state.deadline = None

    def _not_connected(self, exc: Exception, waited: float) -> Answer:
        """A failed connection: ``unreachable`` before any succeeded, else ``connect_error``."""
        if isinstance(exc, httpcore2.ConnectTimeout):
            reason = f"no connection within {waited:g} s"
        else:
            reason = str(exc) or "refused"
        proxy = shown_url(self._proxy) if self._proxy is not None else None
        if proxy is not None:
            reason = f"through the proxy {proxy}: {reason}"
        code = "connect_error" if self._backend.connected else "unreachable"
        return Answer(problem=f"cannot connect ({reason})", code=code, proxy=proxy)


def _without_key(answer: Answer, sent: dict[str, str], *, keep_body: bool = False) -> Answer:
    """``answer`` with the bearer token it was sent for replaced by ``***`` wherever it is
    echoed (servers quote a wrong key in their error message, a proxy may echo it in a header);
    ``keep_body``: a 200's body, the model's answer, is kept as it came."""
    scheme, _, token = sent.get("Authorization", "").partition(" ")
    if scheme != "Bearer" or not token:
        return answer
    headers = {k: v.replace(token, "***") for k, v in (answer.headers or {}).items()}
    body = answer.body if keep_body else answer.body.replace(token.encode(), b"***")
    return replace(answer, body=body, headers=headers)


def _read_body(chunks: Iterator[bytes], headers: dict[str, str], max_bytes: int) -> bytes | None:
    """The body, decoded from gzip/deflate when so marked; ``None`` past ``max_bytes``."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes and not headers.get("content-encoding"):
        return None
    encoding = headers.get("content-encoding", "identity").strip().lower()
    decoder = None
    if encoding in ("gzip", "x-gzip"):
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        decoder = zlib.decompressobj()
    buffer = bytearray()
    for chunk in chunks:
        if decoder is None:
            buffer += chunk
        else:
            # Never inflate more than the cap allows: a small bomb stays small.
            buffer += decoder.decompress(chunk, max_bytes + 1 - len(buffer))
            if decoder.unconsumed_tail and len(buffer) > max_bytes:
                return None
        if len(buffer) > max_bytes:
            return None
    return bytes(buffer)
