"""Where learner code runs during grading: a sandbox built from an allow-list, bounded.

``bwrap.py`` builds the sandbox; ``launch.py`` (cgroup, rlimits) and ``confine.py``
(Landlock) run as plain scripts on the way in; ``zygote.py`` imports everything once and
forks kernels, each confined by ``isolate.py`` and filtered by ``seccomp_filter.py``.
"""
