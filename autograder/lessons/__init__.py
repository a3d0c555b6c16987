"""Per-lesson exercise checks; each module lists its exercises in ``EXERCISES``."""
