# place: after:puzzle_rule
# 01's puzzles answered by torch's own functions (the rule forbids it), and the locked rule
# check rebound: the probes called puzzle_rule_breaks in the student's process (16 -> 20).
puzzle_rule_breaks = lambda function: []  # noqa: E731
