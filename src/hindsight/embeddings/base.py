"""What every embedding provider offers."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed width.

    `name` identifies the model and its version; it is recorded with the schema so that
    vectors from two different models are never compared.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: list[str]) -> list[Vector]: ...

    async def aclose(self) -> None: ...
