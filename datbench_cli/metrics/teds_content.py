"""TEDS with cell text (PubTabNet's table similarity, as CC-OCR's own evaluation scores tables).

Each element of the table is a tree node labelled by its tag; a ``td`` is a leaf carrying its
``colspan``, ``rowspan`` and content tokens (the tags and characters inside it). Renaming costs 1
when tag or spans differ, else, between two cells, the Levenshtein distance of their tokens
normalised by the longer; inserting or deleting costs 1. The similarity is
``1 - distance / n``, ``n`` the larger count of elements below the two ``<table>`` roots. Used by
the corrected profile only (the reference compares tag structure alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from datbench_cli.metrics.edit_distance import levenshtein

# APTED keeps tables of size n_pred x n_gt (1000 x 1000 takes about 25 s); past this many cells
# the sample is a recorded scorer error rather than a run that exhausts memory.
MAX_TREE_CELLS = 1_000_000


class TableTooLarge(ValueError):
    """The two tables would need an unreasonably large tree-distance table."""


@dataclass
class CellNode:
    """One table element: its tag, spans (cells only) and content tokens (cells only)."""

    tag: str
    colspan: Any = None
    rowspan: Any = None
    content: list[str] = field(default_factory=list)
    children: list[CellNode] = field(default_factory=list)


def _span(element: Any, name: str) -> Any:
    raw = element.attrib.get(name, "1")
    try:
        return int(raw)
    except ValueError:
        return raw  # an unreadable span equals only the same text


def _cell_tokens(cell: Any) -> list[str]:
    """The tokens inside a cell: ``<tag>``/``</tag>`` of nested elements and each character of
    text, in document order (tails included, except after the cell itself)."""
    tokens: list[str] = list(cell.text or "")
    pending: list[tuple[Any, bool]] = [(child, False) for child in reversed(list(cell))]
    while pending:
        element, closing = pending.pop()
        if closing:
            tokens.append(f"</{element.tag}>")
            if element.tag != "td":
                tokens.extend(element.tail or "")
            continue
        tokens.append(f"<{element.tag}>")
        tokens.extend(element.text or "")
        pending.append((element, True))
        pending.extend((child, False) for child in reversed(list(element)))
    return tokens


def _tree(table: Any) -> tuple[CellNode, int]:
    """The tree of ``table`` and its count of elements below the root."""
    root = CellNode(str(table.tag))
    count = 0
    pending = [(table, root)]
    while pending:
        source, node = pending.pop()
        for child in source:
            if not isinstance(child.tag, str):
                continue  # comments and processing instructions are not table elements
            count += 1
            if child.tag == "td":
                child_node = CellNode(
                    "td", _span(child, "colspan"), _span(child, "rowspan"), _cell_tokens(child)
                )
                count += sum(1 for e in child.iterdescendants() if isinstance(e.tag, str))
            else:
                child_node = CellNode(str(child.tag))
                pending.append((child, child_node))
            node.children.append(child_node)
    return root, count


def _table(markup: str) -> Any:
    from lxml import etree, html

    parser = html.HTMLParser(remove_comments=True, no_network=True, huge_tree=False)
    try:
        document = html.document_fromstring(f"<html><body>{markup}</body></html>", parser=parser)
    except (ValueError, etree.LxmlError):
        return None  # markup lxml rejects (NUL bytes, an encoding declaration) holds no table
    tables = document.xpath("body/table")
    return tables[0] if tables else None


def table_content_similarity(pred_markup: str, gt_markup: str) -> float:
    """TEDS of two tables with cell text; 0.0 when either side is empty or holds no
    top-level ``<table>``."""
    from apted import APTED, Config

    class _Costs(Config):  # type: ignore[misc]
        def rename(self, first: CellNode, second: CellNode) -> float:
            if (first.tag, first.colspan, first.rowspan) != (
                second.tag,
                second.colspan,
                second.rowspan,
            ):
                return 1.0
            if first.tag == "td" and (first.content or second.content):
                longest = max(len(first.content), len(second.content))
                return levenshtein(first.content, second.content) / longest  # type: ignore[arg-type]
            return 0.0

        def children(self, node: CellNode) -> list[CellNode]:
            return node.children

    if not pred_markup or not gt_markup:
        return 0.0
    pred_table, gt_table = _table(pred_markup), _table(gt_markup)
    if pred_table is None or gt_table is None:
        return 0.0
    (pred_tree, pred_count), (gt_tree, gt_count) = _tree(pred_table), _tree(gt_table)
    if (pred_count + 1) * (gt_count + 1) > MAX_TREE_CELLS:
        raise TableTooLarge(
            f"comparing tables of {pred_count} and {gt_count} elements exceeds the tree-distance "
            f"size limit ({MAX_TREE_CELLS} cells)"
        )
    elements = max(pred_count, gt_count)
    if elements == 0:
        return 1.0
    distance = APTED(pred_tree, gt_tree, _Costs()).compute_edit_distance()
    return 1.0 - float(distance) / elements
