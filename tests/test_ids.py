from __future__ import annotations

import time

from hindsight.ids import uuid7


def test_uuid7_is_version_7_and_monotonic() -> None:
    ids = [uuid7() for _ in range(10_000)]
    assert all(i.version == 7 and i.variant == "specified in RFC 4122" for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    ms = int.from_bytes(ids[-1].bytes[:6], "big")
    assert abs(ms - time.time() * 1000) < 5_000
