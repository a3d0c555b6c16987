"""Instructor grading on top of nbgrader: isolated, bounded, parallel, explained.

nbgrader's own autograde pipeline does the grading; this package replaces its
``Execute`` step with one that runs each kernel in a sandbox with limits, and
adds what nbgrader lacks for a class: parallel workers, per-submission status
records, CSV export and feedback without hidden tests. By concern:

- ``sandbox/``: the confinement every process that runs learner code starts in
  (bubblewrap, Landlock, seccomp, cgroups, the zygote that forks kernels). Its
  ``zygote``, ``isolate`` and ``confine`` run inside the sandbox, never after learner
  code; nothing there holds a reference answer (``autograder/references`` is shown
  empty in every sandbox).
- ``pipeline/``: one submission from its folder to its points, in the grader's
  own process: the policy that reads learner code, the Execute step, the judge
  that decides verdicts from observations and the references, the worker, the runner.
- ``reports/``: what people read afterwards: feedback, exports, LMS files, hand
  grades across regrades, the class report.

``cli.py`` (``course-grade``), ``demo.py`` (a demo class) and ``reasons.py`` (bilingual
reasons every part writes) serve all three.
"""
