"""The course definition and its one command-line front door, `course`."""
