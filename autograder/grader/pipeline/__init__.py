"""One submission from its folder to its points, decided in the grader's own process.

``submission.py`` and ``integrity.py`` read it first, ``policy.py`` reads its code,
``execute.py`` and ``verdicts.py`` run nbgrader's autograde with sandboxed kernels,
``judge.py`` decides each test cell from observations and the references, and
``worker.py`` / ``runner.py`` grade a class in parallel.
"""
