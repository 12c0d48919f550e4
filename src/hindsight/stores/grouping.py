"""Writes that come in for many namespaces at once (the access counts of a flush, the
memories recall warmed), split into one statement per namespace: on a Citus cluster each
is routed to the namespace's shard, where one statement over many would touch them all."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

K = TypeVar("K")


def by_namespace(keyed: Iterable[tuple[str, K]]) -> list[tuple[str, list[K]]]:
    """(namespace, key) pairs grouped by namespace, both in sorted order: the order in
    which concurrent writers lock rows."""
    grouped: dict[str, list[K]] = {}
    for namespace, key in sorted(keyed):  # type: ignore[type-var]
        grouped.setdefault(namespace, []).append(key)
    return list(grouped.items())
