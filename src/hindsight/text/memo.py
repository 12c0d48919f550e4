"""A bounded memo for the per-word functions every embedded or indexed text goes through.

Not functools.lru_cache: it keeps each entry in a list node of a linked list, a container
the garbage collector tracks, so with its 200k-500k entries filled every full collection
walked a million objects: measured in the service under mixed load, 13 gen2 collections of
30-380 ms each (collected: nothing), each one a pause every request in flight waited out.
Here the entries are items of one dict, keyed and valued by strings, numbers and tuples of
them, which the collector stops tracking after their first collection: a full collection
walks one dict, not a node per entry. A full memo starts over rather than keeping LRU order
(a Zipf vocabulary's common words come straight back).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def memo(maxsize: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        cache: dict[object, R] = {}

        @functools.wraps(fn)
        def memoized(*args: P.args, **kwargs: P.kwargs) -> R:
            key = (args, *kwargs.items()) if kwargs else args
            try:
                return cache[key]
            except KeyError:
                pass
            value = fn(*args, **kwargs)
            if len(cache) >= maxsize:
                cache.clear()
            cache[key] = value
            return value

        return memoized

    return decorate
