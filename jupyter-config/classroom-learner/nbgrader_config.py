"""nbgrader's settings for Validate in the classroom (found through $JUPYTER_CONFIG_PATH).

Validate runs the learner's notebook in a fresh kernel with the course's cell timeout.
"""

import zmq

from autograder.course import CELL_TIMEOUT_S

c = get_config()  # noqa: F821

c.Execute.timeout = CELL_TIMEOUT_S
# The kernel is thrown away after the run: end it at once rather than wait while it tears
# itself down (a kernel that imported torch takes a second of CPU to; Validate of lesson 01
# returned in 4.5 s instead of 5.5 on the 2-core machine).
c.Execute.shutdown_kernel = "immediate"
# As in jupyter_server_config.py: encrypted kernel traffic, no warning in the terminal.
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
