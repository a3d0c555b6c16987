"""What people read after grading: feedback, grade exports, LMS files, the class report."""
