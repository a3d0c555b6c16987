"""Mutation testing of the course's checks (issue 33): see ``scripts/mutation_score.py``.

``sites`` finds and edits places in a solution cell's syntax tree, ``operators`` makes
wrong answers (mutants) from a solution, ``transforms`` makes right answers written
another way, and ``judge`` runs one answer against an exercise's test cell in a forked,
bounded child.
"""
