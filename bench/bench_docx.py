"""How long reading a .docx packet takes, by size: a club packet (24 tossups, 24 bonuses)
and packets 10x and 100x larger, each made here with python-docx. Prints the median of a few
reads and the time per 1,000 paragraphs.

    .venv/bin/python bench/bench_docx.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import docx
from docx.enum.text import WD_UNDERLINE

from grace_arena.core.packet import load_packet


def make(path: Path, cycles: int) -> int:
    """A packet of ``cycles`` tossups and as many 3-part bonuses; returns its paragraphs."""
    document = docx.Document()
    document.add_paragraph(f"Benchmark packet of {cycles} cycles")

    def answer(required: str) -> None:
        p = document.add_paragraph("ANSWER: ")
        run = p.add_run(required)
        run.bold, run.underline = True, WD_UNDERLINE.SINGLE
        p.add_run(" [accept something else; prompt on a part]")

    document.add_paragraph("Tossups")
    for i in range(1, cycles + 1):
        document.add_paragraph(
            f"{i}. This question has a first clue about its answer number {i} ("
            "\u201cpro-NUN-see-AY-shun\u201d). A later clue (*) comes here. "
            "For 10 points, name this thing."
        )
        answer(f"thing {i}")
        document.add_paragraph("<Science - Other, Editor>")
    document.add_paragraph("Bonuses")
    for i in range(1, cycles + 1):
        document.add_paragraph(f"{i}. For 10 points each, answer these about things.")
        for level in "emh":
            document.add_paragraph(f"[10{level}] Name this part of thing {i}.")
            answer(f"part {level} {i}")
    document.save(str(path))
    return len(document.paragraphs)


def main() -> None:
    repeats = 5
    with tempfile.TemporaryDirectory() as folder:
        for cycles in (24, 240, 2400):
            path = Path(folder) / f"p{cycles}.docx"
            paragraphs = make(path, cycles)
            times = []
            for _ in range(repeats if cycles < 2400 else 3):
                start = time.perf_counter()
                packet = load_packet(path)
                times.append(time.perf_counter() - start)
            assert len(packet.tossups) == len(packet.bonuses) == cycles, packet.counts()
            median = statistics.median(times)
            print(
                f"{cycles:>5} cycles, {paragraphs:>6} paragraphs, "
                f"{path.stat().st_size / 1e3:>7.0f} kB: median {median * 1000:7.0f} ms "
                f"({median / paragraphs * 1e6:.0f} ms per 1,000 paragraphs)",
                flush=True,
            )
    sys.exit(0)


if __name__ == "__main__":
    main()
