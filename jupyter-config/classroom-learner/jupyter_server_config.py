"""A learner's JupyterLab in the classroom, chosen by the hub through $JUPYTER_CONFIG_PATH.

The Assignments panel fetches, submits and fetches feedback through the course's exchange
(named in the learner's ~/.jupyter/nbgrader_config.py by course-classroom setup); Validate
stays, taking turns with the machine's other Validates. The instructor's tools (formgrader,
Courses, Create Assignment) are off, here and in labconfig/page_config.json.
"""

import zmq

c = get_config()  # noqa: F821

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
