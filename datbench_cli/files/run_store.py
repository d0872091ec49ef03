"""The run store: the lines of ``score``'s inputs, read once, in a private sqlite3 database.

``sqlite3.connect("")`` opens a temporary database on disk that SQLite unlinks as soon as it is
opened (its folder follows ``SQLITE_TMPDIR``/``TMPDIR``): nothing is left behind, even by a
kill, and no later run can read it. Nothing is ever rolled back, so the journal and syncing
are off. A :class:`LineTable` keeps, per line of one input, its position (the order added), its
id, its line number and its raw bytes, plus one extra column; lookups by id are queries. The
lines are held as read: a file rewritten while a run scores it cannot mix two versions, and a
pipe (``score /dev/stdin``) is read once like a file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, Self, TypeVar

T = TypeVar("T")

_PAGE_CACHE_KIB = 8192  # the memory SQLite may keep of the database's pages
#: The most positions :meth:`LineTable.lines_at` takes at once (a query's parameters: SQLite
#: before 3.32 allows 999).
MANY = 512


def blocks(values: Iterable[T]) -> Iterator[list[T]]:
    """``values`` in lists of :data:`MANY` (the last one shorter), for queries a block at a
    time."""
    source = iter(values)
    while block := list(islice(source, MANY)):
        yield block


def unknown(
    ids: Iterable[str], samples_of: Callable[[Sequence[str]], Collection[str]]
) -> list[str]:
    """The ``ids`` that are no sample's, each once, in the order they first appear
    (``samples_of``: those of a block of ids that are samples' ids; asked :data:`MANY` ids at a
    time)."""
    found: dict[str, None] = {}
    for block in blocks(ids):
        known = samples_of(block)
        for ident in block:
            if ident not in found and ident not in known:
                found[ident] = None
    return list(found)


def connect() -> sqlite3.Connection:
    """A new private temporary database (see the module docstring)."""
    db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute(f"PRAGMA cache_size=-{_PAGE_CACHE_KIB}")
    return db


class StoreOwner:
    """What reads an input into the run store ``db``, or into a private store of its own when
    not given one (closed with it: use it as a context manager)."""

    def __init__(self, db: sqlite3.Connection | None = None) -> None:
        self._own = db is None
        self.db = connect() if db is None else db

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own:
            self.db.close()


class LineTable:
    """One input's lines in ``db`` (a table named ``name``)."""

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        self.db, self.name = db, name
        self._count = 0
        db.execute(
            f"CREATE TABLE {name} (position INTEGER PRIMARY KEY, id TEXT NOT NULL, "
            "number INTEGER NOT NULL, raw BLOB NOT NULL, extra)"
        )

    def fill(self, rows: Iterable[tuple[str | bytes, int, bytes, Any]]) -> None:
        """Add every ``(id, line number, raw bytes, extra)`` of ``rows``, in one transaction,
        then index the ids (an id given as bytes is equal to no text id)."""
        counter = iter(range(1 << 62))
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                f"INSERT INTO {self.name} VALUES (?, ?, ?, ?, ?)",
                ((next(counter), *row) for row in rows),
            )
            self.db.execute(f"CREATE INDEX {self.name}_id ON {self.name} (id, position)")
        self._count = self._one(f"SELECT count(*) FROM {self.name}") or 0

    def __len__(self) -> int:
        return self._count

    def _one(self, sql: str, *args: Any) -> Any:
        row = self.db.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def last_of(self, position: int) -> int:
        """The position of the last line with the id of the one at ``position``."""
        last: int = self._one(
            f"SELECT max(b.position) FROM {self.name} a JOIN {self.name} b ON b.id = a.id "
            "WHERE a.position = ?",
            position,
        )
        return last

    def last_by_id(self) -> dict[str, int]:
        """The position of the last line of every id, in one query (matching a run's samples
        to their lines costs one lookup each, not one query each)."""
        return dict(self.db.execute(f"SELECT id, max(position) FROM {self.name} GROUP BY id"))

    def lines_at(self, positions: Sequence[int]) -> list[tuple[int, bytes, Any]]:
        """The line number, raw bytes and extra value of the line at each of ``positions``
        (at most :data:`MANY` of them), in their order, in one query."""
        marks = ",".join("?" * len(positions))
        found = {
            row[0]: row[1:]
            for row in self.db.execute(
                f"SELECT position, number, raw, extra FROM {self.name} WHERE position IN ({marks})",
                list(positions),
            )
        }
        return [found[position] for position in positions]

    def present(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` (at most :data:`MANY`) that some line has, in one query."""
        marks = ",".join("?" * len(ids))
        return {
            ident
            for (ident,) in self.db.execute(
                f"SELECT DISTINCT id FROM {self.name} WHERE id IN ({marks})", list(ids)
            )
        }

    def line(self, position: int) -> tuple[str, int, bytes, Any]:
        """The id, line number, raw bytes and extra value of the line at ``position``."""
        row = self.db.execute(
            f"SELECT id, number, raw, extra FROM {self.name} WHERE position = ?", (position,)
        ).fetchone()
        if row is None:
            raise IndexError(position)
        return row[0], row[1], row[2], row[3]

    def duplicate_ids(self) -> int:
        """How many ids have more than one line."""
        return self._one(
            f"SELECT count(*) FROM (SELECT 1 FROM {self.name} GROUP BY id HAVING count(*) > 1)"
        )

    def duplicated(self) -> Iterator[str]:
        """Every id that has more than one line, each once."""
        query = f"SELECT id FROM {self.name} GROUP BY id HAVING count(*) > 1"
        for (ident,) in self.db.execute(query):
            yield ident

    def absent_from(self, other: LineTable) -> int:
        """How many distinct ids have no line in ``other`` (a table of the same database)."""
        return self._one(
            f"SELECT count(DISTINCT id) FROM {self.name} WHERE id NOT IN "
            f"(SELECT id FROM {other.name})"
        )

    def last_positions(self) -> Iterator[int]:
        """The position of the last line of every distinct id."""
        for (position,) in self.db.execute(f"SELECT max(position) FROM {self.name} GROUP BY id"):
            yield position

    def ids(self) -> Iterator[str]:
        """The id of every line, in the order added."""
        for (ident,) in self.db.execute(f"SELECT id FROM {self.name} ORDER BY position"):
            yield ident


class BlobTable:
    """Blobs added in order, each under a group name (or none), in ``db`` (a table named
    ``name``): read back a group at a time in the order added (the report's result entries,
    the metric details per dataset). Rows are written a batch at a time."""

    _BATCH = 512

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        self.db, self.name = db, name
        self.count = 0
        self._pending: list[tuple[Any, bytes]] = []
        self._indexed = False
        db.execute(f"CREATE TABLE {name} (position INTEGER PRIMARY KEY, grp, blob BLOB NOT NULL)")

    def add(self, blob: bytes, group: str | None = None) -> None:
        self._pending.append((group, blob))
        self.count += 1
        if len(self._pending) >= self._BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany(
                    f"INSERT INTO {self.name} (grp, blob) VALUES (?, ?)", self._pending
                )
            self._pending.clear()

    def blobs(self, group: str | None = None) -> Iterator[bytes]:
        """The blobs of ``group`` (``None``: every blob), in the order added."""
        self._flush()
        if group is None:
            rows = self.db.execute(f"SELECT blob FROM {self.name} ORDER BY position")
        else:
            if not self._indexed:  # one sort once everything is in, not one per insert
                self.db.execute(f"CREATE INDEX {self.name}_grp ON {self.name} (grp, position)")
                self._indexed = True
            rows = self.db.execute(
                f"SELECT blob FROM {self.name} WHERE grp = ? ORDER BY position", (group,)
            )
        for (blob,) in rows:
            yield blob
