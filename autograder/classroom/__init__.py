"""A local classroom on one machine: JupyterHub, nbgrader's exchange, instructor and learners.

``course-classroom setup`` writes everything into one folder; ``course-classroom start``
runs the hub from it; ``course-classroom cluster`` starts a local Dask cluster that
``course-grade grade --scheduler`` grades through.
"""
