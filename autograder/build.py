"""Build the learner notebooks: one nbgrader course per language, then copy its release.

``course-build`` (or ``python -m autograder.build``) writes
``notebooks/<lang>/<lesson>.ipynb`` for every lesson in ``solutions/``. nbgrader's
own generate_assignment replaces solutions, removes hidden tests, clears outputs
and records checksums.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from autograder import course
from autograder.common import domain
from autograder.common.i18n import LANGUAGES

REPO = Path(__file__).resolve().parent.parent


def build(solutions: Path, out: Path) -> list[Path]:
    """Write every learner notebook under ``out``; return the written paths."""
    written = []
    for lang in LANGUAGES:
        with tempfile.TemporaryDirectory(prefix="course-build-") as tmp:
            root = Path(tmp)
            for assignment in course.create(root, lang, solutions):
                target = out / lang / f"{assignment}.ipynb"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / "release" / assignment / f"{assignment}.ipynb", target)
                written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--solutions",
        type=Path,
        default=REPO / "solutions",
        help="folder of bilingual lesson sources (default: solutions/)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "notebooks",
        help="where the learner notebooks go (default: notebooks/)",
    )
    args = parser.parse_args(argv)
    print(f"wrote {domain.write()}")  # what each check draws, said under its prompt
    for path in build(args.solutions, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
