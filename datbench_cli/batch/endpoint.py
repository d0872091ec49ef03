"""Where ``datbench send`` posts, and which API key may go there.

URLs are joined as the OpenAI SDK joins them: the base URL is the API root and a request line's
``url`` (``/v1/chat/completions`` in the Batch API format) names an endpoint below it
(``chat/completions``), so ``https://host/v1beta/openai/`` posts to
``https://host/v1beta/openai/chat/completions``. A base URL without a path (``http://host:8000``)
keeps the line's own ``/v1/...`` path, as every OpenAI-compatible server serves it there.

Keys: a key named by ``--api-key-env`` goes to the base URL's host (the user named it for that
server); ``$OPENAI_API_KEY``, read by default, only goes to the OpenAI API over https. Since
redirects are never followed and a request line only names a path, no key reaches another host.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from datbench_cli.errors import UsageError

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
OPENAI_API_HOST = "api.openai.com"
_API_PREFIX = "/v1/"
# Characters a URL path may hold as they are; anything else (non-ASCII too) is percent-encoded.
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def _ascii_host(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        raise UsageError(f"--base-url has a host name that is not valid: {host!r}") from None


def _printable(text: str) -> bool:
    return all(ch.isprintable() and not ch.isspace() for ch in text)


# A URL's user name and password (what lies between "//" and the host's "@"), and the value of
# each parameter of its query.
_USERINFO_RE = re.compile(r"(?<=//)[^/?#]*@")
_QUERY_VALUE_RE = re.compile(r"(^|&)([^=&#]*)=[^&#]*")


def shown_url(url: str) -> str:
    """``url`` as a message shows it: a user name and password, and every query value (where
    some servers take the key: ``?key=...``), replaced by ``***``."""
    url = _USERINFO_RE.sub("***@", url, count=1)
    head, mark, query = url.partition("?")
    return head + mark + _QUERY_VALUE_RE.sub(r"\1\2=***", query)


@dataclass(frozen=True)
class BaseUrl:
    """A checked ``--base-url``: http(s), a host, no user name or password, no fragment."""

    scheme: str
    host: str  # ASCII (IDNA-encoded), lower case, without brackets for IPv6
    port: int | None
    path: str  # percent-encoded, without a trailing ``/``
    query: str

    @classmethod
    def parse(cls, text: str) -> BaseUrl:
        shown = shown_url(text)
        if not _printable(text):
            raise UsageError(f"--base-url must not hold spaces or control characters: {shown!r}")
        try:
            parts = urlsplit(text)
            port = parts.port
        except ValueError as exc:
            raise UsageError(f"--base-url is not a valid URL ({exc}): {shown!r}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"--base-url must start with http:// or https://, got {shown!r}")
        if parts.username is not None or parts.password is not None:
            raise UsageError(
                "--base-url must not carry a user name or password; put the key in an "
                "environment variable and pass --api-key-env"
            )
        if parts.fragment:
            raise UsageError(f"--base-url must not have a #fragment: {shown!r}")
        return cls(
            parts.scheme,
            _ascii_host(parts.hostname),
            port,
            quote(parts.path, safe=_PATH_SAFE).rstrip("/"),
            parts.query,
        )

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + (f":{self.port}" if self.port is not None else "")

    def endpoint(self, url: str) -> str:
        """The full URL for a request line's ``url`` (a path, checked by :func:`check_path`)."""
        path = quote(url, safe=_PATH_SAFE)
        if self.path:
            relative = path[len(_API_PREFIX) - 1 :] if path.startswith(_API_PREFIX) else path
            path = self.path + relative
        return self.origin + path + (f"?{self.query}" if self.query else "")

    def is_openai(self) -> bool:
        return self.scheme == "https" and self.host == OPENAI_API_HOST

    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def check_path(url: str) -> str | None:
    """Why a request line's ``url`` cannot be used (``None`` when it can): it must be a path
    (``/v1/chat/completions``), never a whole URL, a query or a path with spaces."""
    if not url.startswith("/") or url.startswith("//"):
        return f'"url" must be a path starting with "/" (like {"/v1/chat/completions"!r})'
    if not _printable(url) or "?" in url or "#" in url:
        return '"url" must be a plain path, without spaces, control characters, "?" or "#"'
    if any(part in (".", "..") for part in url.split("/")):
        return '"url" must not hold "." or ".." segments'
    return None


@dataclass(frozen=True)
class KeyChoice:
    """The key to send (or ``None``) and a note for the user about that choice."""

    key: str | None
    note: str | None = None
    withheld: bool = False


def choose_key(base: BaseUrl, env_name: str | None, environ: Mapping[str, str]) -> KeyChoice:
    """The API key ``send`` may use for ``base``: ``--api-key-env``'s, or ``$OPENAI_API_KEY``
    for the OpenAI API only."""
    if env_name is not None:
        key = environ.get(env_name)
        if not key:
            raise UsageError(f"environment variable {env_name} (from --api-key-env) is not set")
        note = None
        if base.scheme == "http" and not base.is_loopback():
            note = (
                f"the key from ${env_name} goes to {base.origin} over plain http, unencrypted; "
                "use https:// if the server offers it"
            )
        return KeyChoice(key, note)
    key = environ.get(DEFAULT_KEY_ENV)
    if not key:
        return KeyChoice(None)
    if base.is_openai():
        return KeyChoice(key)
    return KeyChoice(
        None,
        f"${DEFAULT_KEY_ENV} is not sent to {base.origin} (by default it only goes to "
        f"https://{OPENAI_API_HOST}); pass --api-key-env NAME to send a key to this server",
        withheld=True,
    )
