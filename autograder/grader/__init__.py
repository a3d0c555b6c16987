"""Instructor grading on top of nbgrader: isolated, bounded, parallel, explained.

nbgrader's own autograde pipeline does the grading; this package replaces its
``Execute`` step with one that runs each kernel in a sandbox with limits, and
adds what nbgrader lacks for a class: parallel workers, per-submission status
records, CSV export and feedback without hidden tests.
"""
