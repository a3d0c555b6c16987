"""Make matplotlib draw Chinese labels instead of empty boxes.

The course depends on the ``mplfonts`` package, which ships Noto Sans CJK SC
(SIL Open Font License). Registering that one file keeps figures identical on
every machine, whatever fonts the system has.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

CJK_FAMILY = "Noto Sans CJK SC"
_FONT_FILE = "NotoSansCJKsc-Regular.otf"


class FontError(RuntimeError):
    """Raised when the bundled CJK font cannot be found."""


def cjk_font_path() -> Path:
    """Return the path of the Noto Sans CJK SC file shipped by mplfonts."""
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        raise FontError(
            "The package 'mplfonts' (it carries the Chinese font) is not installed; "
            "run `make lab` or `pip install -e .` to install the course's dependencies."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / _FONT_FILE
    if not path.is_file():
        raise FontError(f"Expected the Chinese font at {path}, but it is missing.")
    return path


def use_cjk_font() -> None:
    """Register the CJK font and put it after DejaVu Sans in matplotlib's fallback list."""
    import matplotlib
    from matplotlib import font_manager

    known = {entry.name for entry in font_manager.fontManager.ttflist}
    if CJK_FAMILY not in known:
        font_manager.fontManager.addfont(str(cjk_font_path()))
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", CJK_FAMILY]
    matplotlib.rcParams["axes.unicode_minus"] = False
