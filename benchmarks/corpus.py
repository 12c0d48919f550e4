"""Deterministic synthetic memories: realistic lengths, a Zipf-distributed vocabulary.

Values read like short agent memories ("prefers tea over coffee in the morning") built from
common English words and a long tail of rarer made-up words (names, products, places), so
both the vector and the keyword arm see a realistic mix of frequent and rare terms.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

COMMON = """user prefers likes works lives meeting project team email phone morning evening
weekend coffee tea office home travel flight hotel budget report deadline client invoice
doctor appointment birthday family friend dog cat car bike book music movie restaurant
dinner lunch breakfast password account server database deploy release bug feature
language city country school university job manager colleague holiday gym running
weather garden kitchen shopping order delivery payment subscription calendar note plan
idea question answer issue ticket priority status review design document contract""".split()

FILLER = "the a of in on at to for with from about after before during and or but".split()

TYPES = ["fact", "preference", "experience", "reflection", "relation"]
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tas",
    "vor",
    "quel",
    "dir",
    "zan",
    "po",
    "lix",
    "mar",
    "tu",
    "sen",
    "ga",
    "bri",
    "no",
    "fel",
    "yo",
    "cra",
]


def rare_words(n: int, rng: random.Random) -> list[str]:
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    def __init__(self, seed: int = 7, vocabulary: int = 20_000) -> None:
        self.rng = random.Random(seed)
        self.words = COMMON + rare_words(vocabulary, self.rng)
        # Zipf weights: word rank r has weight 1/r (cumulated once: choices() is then fast)
        self.cum_weights = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(self.words))))

    def _word(self) -> str:
        return self.rng.choices(self.words, cum_weights=self.cum_weights)[0]

    def sentence(self, low: int = 6, high: int = 24) -> str:
        n = self.rng.randint(low, high)
        out = []
        for _ in range(n):
            out.append(self.rng.choice(FILLER) if self.rng.random() < 0.3 else self._word())
        return " ".join(out)

    def memories(self, n: int, prefix: str = "m") -> Iterator[dict[str, object]]:
        for i in range(n):
            topic = self._word()
            yield {
                "key": f"{prefix}.{topic}.{i}",
                "value": self.sentence(),
                "memory_type": self.rng.choice(TYPES),
                "tags": [self.rng.choice(["work", "home", "health", "money", "social"])],
                "importance": round(self.rng.random(), 2),
            }

    def query(self) -> str:
        return " ".join(self._word() for _ in range(self.rng.randint(2, 6)))
