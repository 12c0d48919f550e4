"""Read a Prometheus text exposition the way a scraper does."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(text: str, name: str, **labels: str) -> float:
    """The sample's value (0 when absent: a counter not yet incremented is not listed)."""
    return samples(text).get((name, frozenset(labels.items())), 0.0)


def total(text: str, name: str, **labels: str) -> float:
    """Sum of the samples whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples(text).items() if n == name and want <= ls)
