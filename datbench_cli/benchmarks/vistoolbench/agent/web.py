"""The opt-in web tools (``--web-tools``): Google search (SerpAPI), page text, weather
(OpenWeatherMap), with the official result shapes.

Keys come from environment variables the user names and are sent only to their own service's
fixed host. Page fetches go only to public addresses (never loopback, private or link-local
ones, including after a redirect), are capped in size and time, and return plain text. A
host's name is resolved once and connected to at an address that was checked, so an answer
that changes between the check and the connection (DNS rebinding) reaches nothing private.
Through an ``HTTP(S)_PROXY`` proxy (used as urllib does) the name's local answer is checked
and the proxy, which resolves it again, is trusted.
"""

from __future__ import annotations

import html.parser
import http.client
import ipaddress
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import orjson

_TIMEOUT = 15.0
_FETCH_SECONDS = 30.0  # a whole fetch, at most (plus one read's _TIMEOUT)
_MAX_PAGE_BYTES = 5_000_000
_MAX_TEXT = 8000
_USER_AGENT = "Mozilla/5.0 (compatible; datbench-agent)"
_SKIPPED_TAGS = {"script", "style", "nav", "header", "footer", "aside", "noscript", "template"}


@dataclass(frozen=True)
class WebKeys:
    """The API keys (values, never printed) and the variable names they came from."""

    serp_api_key: str | None = field(default=None, repr=False)
    openweather_key: str | None = field(default=None, repr=False)


class _Refused(Exception):
    pass


def _is_public(address: str) -> bool:
    """Whether ``address`` (an IP address) may be fetched from: a global one only."""
    return ipaddress.ip_address(address).is_global


def _public_addresses(url: str) -> list[str]:
    """The addresses ``url``'s host resolves to, once; refused unless it is http(s) and every
    one of them is public (a name with one private answer may be given it on a later lookup)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Refused("only http and https URLs can be fetched")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise _Refused(f"cannot resolve {parts.hostname}: {exc}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses or not all(_is_public(address) for address in addresses):
        raise _Refused(f"{parts.hostname} is not a public address")
    return addresses


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """A connection to one of ``addresses`` (checked already) instead of a second lookup of
    the host name, which stays the name in the Host header (and TLS's SNI and certificate
    check, in the HTTPS subclass, whose ``connect`` wraps this one's socket)."""

    addresses: list[str] = []

    def connect(self) -> None:
        failure = OSError(f"no address to connect to for {self.host}")
        for address in self.addresses:
            try:
                self.sock = socket.create_connection((address, self.port), self.timeout)
                return
            except OSError as exc:
                failure = exc
        raise failure


class _PinnedHTTPSConnection(http.client.HTTPSConnection, _PinnedHTTPConnection):
    pass


def _connection_class(req: urllib.request.Request, trusted: str | None, https: bool) -> Any:
    """How to connect for ``req``: to a host other than ``trusted``, at the host's checked
    public addresses. Through a proxy (``HTTP(S)_PROXY``; it resolves the name itself) the
    host's addresses are checked here, and the proxy is connected to as it is named."""
    plain = http.client.HTTPSConnection if https else http.client.HTTPConnection
    parts = urllib.parse.urlsplit(req.full_url)
    if parts.hostname == trusted:
        return plain
    addresses = _public_addresses(req.full_url)
    if req.host != parts.netloc:  # a proxy is the host to connect to
        return plain
    pinned = _PinnedHTTPSConnection if https else _PinnedHTTPConnection

    def connection(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        made = pinned(*args, **kwargs)
        made.addresses = addresses
        return made

    return connection


class _PinnedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, trusted: str | None) -> None:
        super().__init__()
        self._trusted = trusted

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_connection_class(req, self._trusted, https=False), req)


class _PinnedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, trusted: str | None) -> None:
        super().__init__()
        self._trusted = trusted

    def https_open(self, req: urllib.request.Request) -> Any:
        connection = _connection_class(req, self._trusted, https=True)
        return self.do_open(connection, req)  # the default context: certificates checked


class _HttpRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001
        if urllib.parse.urlsplit(newurl).scheme not in ("http", "https"):
            raise _Refused("only http and https URLs can be fetched")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _get(url: str, *, check_public: bool, limit: int = _MAX_PAGE_BYTES) -> bytes:
    """At most ``limit`` bytes of ``url``'s body. ``check_public``: ``url``'s host is checked
    too (else only the hosts it redirects to are); every checked host is connected to at the
    address that was checked."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise _Refused("only http and https URLs can be fetched")
    trusted = None if check_public else parts.hostname
    opener = urllib.request.build_opener(
        _PinnedHTTPHandler(trusted), _PinnedHTTPSHandler(trusted), _HttpRedirects()
    )
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    # The socket timeout bounds each read; the deadline bounds the whole body, which a server
    # sending a byte every few seconds held for ever (5 MB at one byte per read).
    deadline = time.monotonic() + _FETCH_SECONDS
    body = bytearray()
    with opener.open(request, timeout=_TIMEOUT) as reply:
        while len(body) < limit:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no whole answer within {_FETCH_SECONDS:g} s")
            chunk = reply.read1(min(65536, limit - len(body)))
            if not chunk:
                break
            body += chunk
    return bytes(body)


class _Text(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skip += tag in _SKIPPED_TAGS
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in _SKIPPED_TAGS and self._skip > 0
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title and not self.title:
            self.title = data.strip()
        if not self._skip:
            self.parts.append(data)


def page_text(url: Any) -> dict[str, Any]:
    """The text of a public web page (the first 8,000 characters)."""
    try:
        if not isinstance(url, str):
            raise _Refused("the url must be a string")
        parser = _Text()
        parser.feed(_get(url, check_public=True).decode("utf-8", "replace"))
        words = " ".join(" ".join(parser.parts).split())
        return {
            "url": url,
            "title": parser.title,
            "text": words[:_MAX_TEXT],
            "status": "success",
            "content_length": len(words),
        }
    except (_Refused, OSError, ValueError, urllib.error.URLError) as exc:
        return {"url": str(url), "title": "", "text": "", "status": "error", "error": str(exc)}


def google_search(keys: WebKeys, query: Any, num_results: Any = 5) -> dict[str, Any]:
    """Search results from SerpAPI (the key goes to serpapi.com only)."""
    if not keys.serp_api_key:
        return {"results": [], "query": query, "status": "error", "error": "no SerpAPI key"}
    try:
        count = max(1, min(int(num_results), 10))
        params = urllib.parse.urlencode(
            {"api_key": keys.serp_api_key, "q": str(query), "num": count, "engine": "google"}
        )
        data = orjson.loads(_get(f"https://serpapi.com/search?{params}", check_public=False))
        results = [
            {
                "title": item.get("title", ""),
                "snippet": item.get("snippet", ""),
                "url": item.get("link", ""),
                "display_link": item.get("displayed_link", ""),
            }
            for item in data.get("organic_results", [])
            if isinstance(item, dict)
        ]
        total = (data.get("search_information") or {}).get("total_results", 0)
        return {"results": results, "query": query, "status": "success", "total_results": total}
    except (OSError, ValueError, TypeError, AttributeError, urllib.error.URLError) as exc:
        message = str(exc).replace(keys.serp_api_key, "***")
        return {"results": [], "query": query, "status": "error", "error": message}


def historical_weather(keys: WebKeys, location: Any, date: Any) -> dict[str, Any]:
    """Weather from OpenWeatherMap (current data, as the official tool: history is paid)."""
    base = {"location": location, "date": date}
    key = keys.openweather_key
    if not key:
        return {**base, "status": "error", "error": "no OpenWeatherMap key"}
    try:
        query = urllib.parse.urlencode({"q": str(location), "limit": 1, "appid": key})
        places = orjson.loads(
            _get(f"https://api.openweathermap.org/geo/1.0/direct?{query}", check_public=False)
        )
        if not places:
            return {**base, "status": "error", "error": "Location not found"}
        lat, lon = places[0]["lat"], places[0]["lon"]
        query = urllib.parse.urlencode({"lat": lat, "lon": lon, "appid": key, "units": "metric"})
        data = orjson.loads(
            _get(f"https://api.openweathermap.org/data/2.5/weather?{query}", check_public=False)
        )
        main = data["main"]
        return {
            **base,
            "coordinates": f"{lat}, {lon}",
            "temperature": {
                "current": f"{main['temp']:.1f}°C",
                "feels_like": f"{main['feels_like']:.1f}°C",
                "min": f"{main['temp_min']:.1f}°C",
                "max": f"{main['temp_max']:.1f}°C",
            },
            "conditions": data["weather"][0]["description"],
            "humidity": f"{main['humidity']}%",
            "wind_speed": f"{data['wind']['speed']} m/s",
            "pressure": f"{main['pressure']} hPa",
            "status": "success",
            "note": "current weather (historical data needs a paid plan)",
        }
    except (OSError, ValueError, KeyError, IndexError, TypeError, urllib.error.URLError) as exc:
        return {**base, "status": "error", "error": str(exc).replace(key, "***")}
