"""The instructor's JupyterLab in the classroom, chosen by the hub through $JUPYTER_CONFIG_PATH.

Every nbgrader tool is on: the formgrader (on the course named in the instructor's
~/.jupyter/nbgrader_config.py by course-classroom setup; its Autograde and Generate Feedback
run course-grade), Create Assignment, the Assignments and Courses panels, Validate.
"""

import os

import zmq

c = get_config()  # noqa: F821

# The terminal keeps the PATH the hub gave (the course's commands: nbgrader, course-grade).
# jupyter_server's default under a spawner is a login shell, whose /etc/profile replaces it.
c.ServerApp.terminado_settings = {"shell_command": [os.environ.get("SHELL") or "/bin/sh", "-i"]}

c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.assignment_list": True,
    "nbgrader.server_extensions.course_list": True,
    # The formgrader, its Autograde and Generate Feedback going through course-grade
    # (sandboxed, on the classroom's grading cluster): autograder/classroom/formgrader.py
    "nbgrader.server_extensions.formgrader": False,
    "autograder.classroom.formgrader": True,
    "nbgrader.server_extensions.validate_assignment": True,
}

# Encrypted traffic between the server and each kernel where pyzmq can (as in self-study).
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
