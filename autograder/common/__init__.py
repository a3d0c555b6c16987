"""Pure building blocks imported on both sides: results, messages, comparisons, inputs.

Nothing here calls learner code. See docs/grading-design.md.
"""
