"""The project loader on 20,000 generated files: how many load, how many are refused with
our error (ProjectFileError), and every other exception that comes out, with its first line.
Target: none, and every refusal one line of at most LONG_LINE characters.

The files come from the generator of the suite's property test (tests/project_documents.py):
mostly templates' documents with a few values changed, removed, added or nested deeply, then
written whole, with a BOM, truncated or with a byte changed; also random JSON and random bytes.
Hypothesis draws them from a fixed seed, so a run can be repeated exactly.

    .venv/bin/python bench/loader_fuzz.py [--documents 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' generator

from studio.core.base.messages import first_line  # noqa: E402
from studio.core.project.document import ProjectFileError, load_project  # noqa: E402
from tests.project_documents import file_bytes  # noqa: E402

LONG_LINE = 300


def fuzz(documents: int, start: int, folder: Path) -> tuple[Counter[str], list[str]]:
    """Load ``documents`` generated files; the outcome counts and the uncaught exceptions."""
    outcomes: Counter[str] = Counter()
    uncaught: list[str] = []
    path = folder / "fuzzed.studio.json"

    @seed(start)
    @settings(max_examples=documents, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=file_bytes())
    def load_one(data: bytes) -> None:
        path.write_bytes(data)
        try:
            load_project(path)
        except ProjectFileError as exc:
            outcomes["refused"] += 1
            message = str(exc)
            outcomes["long"] += "\n" in message or len(message) > LONG_LINE
        except Exception as exc:  # noqa: BLE001 - what this script counts
            uncaught.append(f"{type(exc).__name__}: {first_line(exc)}")
        else:
            outcomes["loaded"] += 1

    load_one()
    return outcomes, uncaught


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        outcomes, uncaught = fuzz(args.documents, args.seed, Path(folder))
        seconds = time.perf_counter() - began
    total = outcomes["loaded"] + outcomes["refused"] + len(uncaught)
    print(f"{total:,} documents in {seconds:.0f} s: {outcomes['loaded']:,} loaded, "
          f"{outcomes['refused']:,} refused with ProjectFileError ({outcomes['long']:,} of them "
          f"in more than one line or over {LONG_LINE} characters), {len(uncaught):,} uncaught "
          "exceptions")
    for line, times in Counter(uncaught).most_common():
        print(f"  {times:,} × {line}")


if __name__ == "__main__":
    main()
