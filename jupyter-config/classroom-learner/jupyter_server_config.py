"""A learner's JupyterLab in the classroom, chosen by the hub through $JUPYTER_CONFIG_PATH.

The Assignments panel fetches, submits and fetches feedback through the course's exchange
(named in the learner's ~/.jupyter/nbgrader_config.py by course-classroom setup); Validate
stays, taking turns with the machine's other Validates. The instructor's tools (formgrader,
Courses, Create Assignment) are off, here and in labconfig/page_config.json.
"""

import os

import zmq

c = get_config()  # noqa: F821

# The terminal keeps the PATH the hub gave (the course's python, nbgrader), as the
# instructor's does: jupyter_server's default under a spawner is a login shell, whose
# /etc/profile replaces it (python, nbgrader "not found", python3 the system's without torch).
c.ServerApp.terminado_settings = {"shell_command": [os.environ.get("SHELL") or "/bin/sh", "-i"]}

c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.assignment_list": True,
    "nbgrader.server_extensions.course_list": False,
    "nbgrader.server_extensions.formgrader": False,
    # Validate through the classroom's queue (a few at a time per machine, off the
    # server's event loop): autograder/classroom/validate_queue.py
    "nbgrader.server_extensions.validate_assignment": False,
    "autograder.classroom.validate_queue": True,
}

# Encrypted traffic between the server and each kernel where pyzmq can (as in self-study).
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
