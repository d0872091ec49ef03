"""Tree edit distances used by the CC-OCR scorers.

* HTML structure trees: lxml's parse of a table, one node per element labelled by its tag (text and
  attributes dropped), compared with APTED under unit costs.
* Labelled JSON trees: one node per key / list slot / leaf value, compared with Zhang-Shasha
  (``zss``) where inserting or deleting a node costs the length of its label and renaming costs
  the Levenshtein distance between the labels.

The libraries are imported lazily. Trees are built iteratively, so nesting depth never hits
Python's recursion limit here.
"""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.edit_distance import levenshtein
from datbench_cli.runtime.budget import SampleTimeout

FALLBACK_TABLE_LABEL = "table"
_html_parser: Any = None


def _parser() -> Any:
    """One lxml HTML parser, network access off (HTML parsing resolves no external entities)."""
    global _html_parser
    if _html_parser is None:
        from lxml import html

        _html_parser = html.HTMLParser(no_network=True, huge_tree=False)
    return _html_parser


def html_structure_tree(markup: str) -> Any:
    """``markup`` parsed by ``lxml.html.fromstring`` as an APTED tree of tags.

    Comments and processing instructions are nodes too (labelled by lxml's Comment/PI factory,
    equal only to their own kind). Anything lxml rejects (empty input, an encoding declaration,
    NUL bytes) gives a lone ``table`` node.
    """
    from apted.helpers import Tree
    from lxml import html

    try:
        element = html.fromstring(markup, parser=_parser())
    except SampleTimeout:
        raise
    except Exception:
        # Quirk: unparseable markup becomes a single "table" node, not an empty tree.
        return Tree(FALLBACK_TABLE_LABEL)
    root = Tree(element.tag)
    pending = [(element, root)]
    while pending:
        source, node = pending.pop()
        for child in source:
            child_node = Tree(child.tag)
            node.children.append(child_node)
            pending.append((child, child_node))
    return root


def tree_size(root: Any) -> int:
    """Number of nodes of a tree whose nodes keep their subtrees in ``.children``."""
    count = 0
    pending = [root]
    while pending:
        node = pending.pop()
        count += 1
        pending.extend(node.children)
    return count


def table_structure_similarity(pred_markup: str, gt_markup: str) -> float:
    """``max(0, 1 - TED/|GT|)``: unit-cost tree edit distance normalised by the GT node count.

    A prediction with at least twice as many nodes as the GT needs at least |GT| insertions or
    deletions, so its similarity is exactly 0.0 and the (cubic) distance is not computed.
    """
    from apted import APTED

    pred_tree = html_structure_tree(pred_markup)
    gt_tree = html_structure_tree(gt_markup)
    gt_nodes = tree_size(gt_tree)
    if tree_size(pred_tree) >= 2 * gt_nodes:
        return 0.0
    distance = APTED(pred_tree, gt_tree).compute_edit_distance()
    return max(0.0, 1.0 - float(distance) / gt_nodes)


def json_label_tree(value: Any, label: str = "root") -> Any:
    """A ``zss`` tree of a JSON-like value under a node labelled ``label``.

    A dict gives one child per item in key order, labelled by the key; a list one child per item,
    labelled ``<label>[<index>]``; any other value one child labelled ``str(value)``, unless the
    value is ``None`` or blank (then no child).
    """
    from zss import Node

    root = Node(str(label))
    pending = [(value, root)]
    while pending:
        data, node = pending.pop()
        if isinstance(data, dict):
            for key, item in sorted(data.items()):
                child = Node(str(key))
                node.addkid(child)
                pending.append((item, child))
        elif isinstance(data, list):
            for index, item in enumerate(data):
                child = Node(f"{node.label}[{index}]")
                node.addkid(child)
                pending.append((item, child))
        elif data is not None and str(data).strip():
            node.addkid(Node(str(data)))
    return root


def label_weight(root: Any) -> int:
    """Total label length over all nodes of a ``zss`` tree."""
    total = 0
    pending = [root]
    while pending:
        node = pending.pop()
        total += len(node.label)
        pending.extend(node.children)
    return total


def weighted_tree_distance(first: Any, second: Any) -> float:
    """Zhang-Shasha distance with Levenshtein label costs (what ``zss.simple_distance`` computes
    when the ``editdistance`` package is installed)."""
    from zss import simple_distance

    return float(simple_distance(first, second, label_dist=levenshtein))
