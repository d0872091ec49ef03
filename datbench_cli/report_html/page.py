"""Filling the page template: the data embedded once as JSON that cannot end its script
element, the app script allowed by its hash (Content-Security-Policy: no other script runs, no
request leaves the page but images from the page's folder or embedded)."""

from __future__ import annotations

import base64
import hashlib
import html
from importlib import resources
from typing import Any

from datbench_cli.files import jsonio
from datbench_cli.version import __version__


def _asset(name: str) -> str:
    return resources.files("datbench_cli.report_html").joinpath(name).read_text("utf-8")


def embed_json(data: Any) -> str:
    """Compact JSON safe inside a ``<script type="application/json">`` element: ``<``, ``>``
    and ``&`` (which only occur inside strings) become ``\\u`` escapes, so no ``</script>`` or
    ``<!--`` in a model output can end or change the element."""
    return _embed_bytes(data).decode()


def _embed_bytes(data: Any) -> bytes:
    raw = jsonio.dumps(data)  # a path that is not UTF-8 (in a subtitle) as its escape
    return raw.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def render(title: str, data: dict[str, Any]) -> bytes:
    """The page: template + styles + app script + data."""
    app = _asset("app.js")
    digest = base64.b64encode(hashlib.sha256(app.encode()).digest()).decode()
    csp = (
        "default-src 'none'; "
        f"script-src 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; "
        "img-src data: file: 'self'; "
        "base-uri 'none'; form-action 'none'"
    )
    page = _asset("template.html")
    # Each placeholder is replaced once, data last (its text is never searched again).
    page = page.replace("__DATBENCH_CSP__", csp, 1)
    page = page.replace("__DATBENCH_GENERATOR__", f"datbench {__version__}", 1)
    page = page.replace("__DATBENCH_TITLE__", html.escape(title), 1)
    head, tail = page.split("__DATBENCH_APP__", 1)
    page = head + app + tail
    head, tail = page.split("__DATBENCH_DATA__", 1)
    return head.encode("utf-8") + _embed_bytes(data) + tail.encode("utf-8")
