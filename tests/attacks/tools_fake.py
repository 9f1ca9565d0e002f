# place: end
# Not code: FAKE below is a grading-tools module whose checks never fail, for the attacks that
# try to put it in place of autograder/tools.py (shadow_tools_*). In a kernel that runs the
# test cells with the student's code (stock nbgrader) it wins full marks.
FAKE = '''
import contextlib, math
import torch
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
class TestFailure(AssertionError):
    pass
def probe(function=None, *, torch=True):
    return function if function is not None else (lambda function: function)
def examples(strategy, count=25):
    return []
def check(*args, **kwargs):
    return None
def credit(points):
    return points
def mismatch(*args, **kwargs):
    return None
def answer(name):
    return None
def class_chain(cls):
    return []
def graph_nodes(tensor):
    return []
def reachable(root, kind):
    return False
__all__ = ["contextlib", "math", "torch", "HealthCheck", "Phase", "given", "settings", "st", "TestFailure",
           "probe", "examples", "mismatch", "check", "credit", "answer", "class_chain", "graph_nodes", "reachable"]
'''
