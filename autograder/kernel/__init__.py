"""Modules that run inside a learner's process: the notebook kernel, or the sandboxed observer.

Nothing here decides a grade. See docs/grading-design.md.
"""
