"""Digests of judged response text, so a verdict counts only for the text it judged.

``make-judge-tasks`` records :func:`response_digest` of each judged response in the judge task
(``response_digest``) and in the batch request's ``custom_id`` (``<id>#<digest>``), which a
batch runner's output carries back. A judge response whose digest differs from the digest of the
current response is *stale*.
"""

from __future__ import annotations

import hashlib
import re

DIGEST_FIELD = "response_digest"
_DIGEST_LEN = 16
_TAGGED_RE = re.compile(r"(.+)#([0-9a-f]{16})")


def response_digest(text: str) -> str:
    """The first 16 hex digits of the sha256 of ``text`` (UTF-8; lone surrogates escaped)."""
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:_DIGEST_LEN]


def tag_id(ident: str, digest: str) -> str:
    """``<id>#<digest>``: the ``custom_id`` of a judge request."""
    return f"{ident}#{digest}"


def split_tagged_id(custom_id: str) -> tuple[str, str | None]:
    """``(id, digest)`` of a tagged ``custom_id``; ``(custom_id, None)`` when it has no tag."""
    match = _TAGGED_RE.fullmatch(custom_id)
    if match is None:
        return custom_id, None
    return match.group(1), match.group(2)


def is_digest(value: object) -> bool:
    """Whether ``value`` looks like a :func:`response_digest`."""
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{16}", value) is not None


def is_stale(recorded: str | None, text: str) -> bool:
    """A recorded digest that is not the digest of ``text`` (no digest: never stale)."""
    return recorded is not None and recorded != response_digest(text)
