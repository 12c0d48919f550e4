"""What the lifecycle did (or, in a dry run, would do) to one memory, and why."""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class Move:
    namespace: str
    id: uuid.UUID
    key: str
    # cold | archived | delete | expire | demote | merged | superseded | review | distilled
    action: str
    rule: str
    reason: str
