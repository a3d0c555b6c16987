"""JupyterLab for self-study, read by `make lab` through $JUPYTER_CONFIG_PATH.

A learner on their own has no course and no exchange, so nbgrader's Assignments,
Courses and Formgrader only show "Error fetching courses!": their server parts are
off here and their panels (with nbgrader's menu and the instructor's Create
Assignment tool) are disabled in labconfig/page_config.json. Validate stays: it
needs neither. The classroom's sibling folders (classroom-learner, classroom-instructor)
leave these on; `course-classroom` makes JupyterHub choose them, and names each person's
course and exchange in their ~/.jupyter/nbgrader_config.py.
"""

import zmq

c = get_config()  # noqa: F821

c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.assignment_list": False,
    "nbgrader.server_extensions.course_list": False,
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.validate_assignment": True,
}

# Encrypt the traffic between the server and each kernel where pyzmq can (CurveZMQ);
# it also keeps ipykernel's "running over TCP without encryption" warning off the terminal.
if zmq.has("curve"):
    c.KernelManager.transport_encryption = "auto"
