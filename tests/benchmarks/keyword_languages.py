"""The keyword interpreter's time per reply, reading every language or English alone.

    python -m tests.benchmarks.keyword_languages [--rounds 20]

Every reply of every set (tests/interpreters: the English set and each language's) is read
``rounds`` times by an interpreter of all languages and by one of English alone; the median
time per reply of each is printed, with the slowest reply. A reply is read once per language,
so all eight cost about eight English readings; the figure to watch is that a reply stays well
under a millisecond, far below what an answer costs anyway (a durable write).
"""

from __future__ import annotations

import argparse
import statistics
import time

from bot.core.reply import ReplyInput
from interpreters import KeywordReplyInterpreter
from tests.interpreters.score import ASK, SET_LANGUAGES, cases_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    rounds = parser.parse_args().rounds
    replies = [reply for code in ("en", *SET_LANGUAGES) for _, reply, _ in cases_of(code)]
    inputs = [ReplyInput(ask=ASK, reply=reply) for reply in replies]
    readers = {"all languages": KeywordReplyInterpreter(),
               "English alone": KeywordReplyInterpreter(languages=["en"])}  # fmt: skip
    for name, interpreter in readers.items():
        for one in inputs:  # the tables are compiled once, on first use
            interpreter.interpret(one)
        per_reply: list[float] = []
        slowest = (0.0, "")
        for _ in range(rounds):
            started = time.perf_counter()
            for one in inputs:
                began = time.perf_counter()
                interpreter.interpret(one)
                took = time.perf_counter() - began
                slowest = max(slowest, (took, one.reply))
            per_reply.append((time.perf_counter() - started) / len(inputs))
        median = statistics.median(per_reply)
        print(f"{name}: {len(inputs)} replies x {rounds}, median {median * 1e6:.0f} µs a reply "
              f"({1 / median:,.0f} replies/s); slowest {slowest[0] * 1e6:.0f} µs "
              f"({slowest[1]!r})")  # fmt: skip


if __name__ == "__main__":
    main()
