"""Corpora for the performance matrix: ours, and two we did not design.

- `synthetic`: `corpus.Corpus`, short agent memories from common words and a Zipf tail of
  made-up names, with types, tags and importance (the corpus the first numbers came from).
- `zipf`: plain text as an outside user's first test would make it: 6–24 words drawn from
  one Zipf-distributed vocabulary of 50,000 words, no types or tags; queries of 2–7 words.
- `madeup`: the outside measurement of issue 33 as its author would write it: a Zipf
  vocabulary (exponent 1) of 50,000 made-up words of random letters, one namespace, facts
  of 6–24 words, queries of 2–7 words drawn from the same distribution, so most queries
  are a few common words. Unlike `zipf`'s `w123` tokens, the words share few character
  trigrams and most of them stem to themselves, as made-up words do.
- `english`: natural English sentences, from the docstrings of Python's standard library
  (offline, and the same on every machine with the same Python); queries are 3–7 of a
  sentence's words.

Every corpus is deterministic for its seed.
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import random
import re
import sysconfig
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any, Protocol

from benchmarks.corpus import Corpus


class MatrixCorpus(Protocol):
    name: str

    def memories(self, n: int) -> Iterator[dict[str, Any]]: ...

    def queries(self, n: int) -> list[str]: ...


class Synthetic:
    name = "synthetic"

    def memories(self, n: int) -> Iterator[dict[str, Any]]:
        return Corpus(seed=7).memories(n)

    def queries(self, n: int) -> list[str]:
        corpus = Corpus(seed=99)
        return [corpus.query() for _ in range(n)]


class Zipf:
    name = "zipf"

    def __init__(self, vocabulary: int = 50_000) -> None:
        self.words = [f"w{i}" for i in range(vocabulary)]
        self.cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(vocabulary)))

    def _text(self, rng: random.Random, low: int, high: int) -> str:
        return " ".join(rng.choices(self.words, cum_weights=self.cum, k=rng.randint(low, high)))

    def memories(self, n: int) -> Iterator[dict[str, Any]]:
        rng = random.Random(3)
        for i in range(n):
            yield {"key": f"z.{i}", "value": self._text(rng, 6, 24)}

    def queries(self, n: int) -> list[str]:
        rng = random.Random(5)
        return [self._text(rng, 2, 7) for _ in range(n)]


class MadeUp(Zipf):
    name = "madeup"

    def __init__(self, vocabulary: int = 50_000) -> None:
        super().__init__(vocabulary)
        rng = random.Random(11)
        letters = "abcdefghijklmnopqrstuvwxyz"
        seen: dict[str, None] = {}
        while len(seen) < vocabulary:
            word = "".join(rng.choices(letters, k=rng.randint(3, 10)))
            seen.setdefault(word, None)
        self.words = list(seen)


def _stdlib_modules() -> list[str]:
    stdlib = sysconfig.get_paths()["stdlib"]
    names = []
    # walk_packages imports each package to find its submodules: only the stdlib's own
    for info in pkgutil.walk_packages([stdlib], onerror=lambda _: None):
        if info.name.split(".")[0].startswith(SKIP) or ".test" in info.name:
            continue
        if info.name.endswith("__main__"):  # importing one runs a command-line tool
            continue
        names.append(info.name)
    return sorted(names)


SKIP = ("_", "test", "idlelib", "tkinter", "turtle", "antigravity", "this", "lib2to3")


@cache
def stdlib_sentences() -> tuple[str, ...]:
    """Distinct sentences of 6–40 words from the standard library's docstrings (modules,
    their classes and functions, and the classes' methods)."""
    seen: dict[str, None] = {}
    for name in _stdlib_modules():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
        except BaseException:  # some modules refuse to import on this machine; skip them
            continue
        docs = [module.__doc__ or ""]
        for value in vars(module).values():
            if getattr(value, "__module__", None) != name:
                continue
            docs.append(getattr(value, "__doc__", None) or "")
            if isinstance(value, type):
                docs += [getattr(m, "__doc__", None) or "" for m in vars(value).values()]
        for doc in docs:
            if not isinstance(doc, str):
                continue
            for sentence in re.split(r"(?<=[.!?])\s+", " ".join(doc.split())):
                words = sentence.split()
                if 6 <= len(words) <= 40 and sentence[0].isupper() and ">>>" not in sentence:
                    seen[sentence] = None
    return tuple(seen)


class English:
    name = "english"

    def memories(self, n: int) -> Iterator[dict[str, Any]]:
        sentences = stdlib_sentences()
        rng = random.Random(13)
        for i in range(n):
            # past the distinct sentences, pairs of them: still natural text, never a copy
            if i < len(sentences):
                value = sentences[i]
            else:
                value = f"{rng.choice(sentences)} {rng.choice(sentences)}"
            yield {"key": f"e.{i}", "value": value[:8000]}

    def queries(self, n: int) -> list[str]:
        sentences = stdlib_sentences()
        rng = random.Random(17)
        out = []
        for _ in range(n):
            words = [w.strip(".,;:()'\"`") for w in rng.choice(sentences).split()]
            words = [w for w in words if len(w) > 3] or words
            k = min(len(words), rng.randint(3, 7))
            out.append(" ".join(rng.sample(words, k)))
        return out


CORPORA: dict[str, MatrixCorpus] = {c.name: c for c in (Synthetic(), Zipf(), MadeUp(), English())}
