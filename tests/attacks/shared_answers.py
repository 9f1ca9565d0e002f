"""Notebooks for the cross-student attacks: one student leaves answers behind in the
sandbox (``share_answers.py``), later ones try to read them through one channel each.

A reader is the blank release whose answer cells each run the answer found in the channel,
so it scores full marks exactly when the channel carries answers between students.
"""
from __future__ import annotations

import copy
import json

import nbformat

from . import inject

CHANNELS = ("tmp", "shm", "mqueue", "keyring")

_READERS = {
    "tmp": 'open(f"/tmp/share_{TOKEN}/{grade_id}.py").read()',
    "shm": 'open(f"/dev/shm/{TOKEN}_{grade_id}.py").read()',
    "mqueue": "_from_queue(grade_id)",
    "keyring": "_from_keyring(grade_id)",
}

_HELPERS = '''
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
TOKEN = "{token}"

def _from_queue(grade_id):
    queue = _libc.mq_open(f"/{{TOKEN}}_{{grade_id}}".encode(), os.O_RDONLY, 0, None)
    buffer = ctypes.create_string_buffer(8192)
    size = _libc.mq_receive(queue, buffer, 8192, None) if queue >= 0 else -1
    if size < 0:
        raise NotImplementedError("no answer in the queue")
    return buffer.raw[:size].decode()

def _from_keyring(grade_id):
    key = _libc.syscall(250, 10, ctypes.c_int(-4), b"user", f"{{TOKEN}}_{{grade_id}}".encode(), 0)
    buffer = ctypes.create_string_buffer(8192)
    size = _libc.syscall(250, 11, key, buffer, 8192) if key >= 0 else -1
    if size < 0:
        raise NotImplementedError("no answer in the keyring")
    return buffer.raw[:size].decode()
'''


def writer(root, assignment, token: str) -> nbformat.NotebookNode:
    source, place = inject.attack_source("share_answers")
    source = source.replace("ANSWERS_JSON", repr(json.dumps(inject.answers(root, assignment))))
    source = source.replace('"TOKEN"', repr(token))
    return inject.insert(inject.honest(root, assignment), source, place)


def reader(root, assignment, token: str, channel: str) -> nbformat.NotebookNode:
    notebook = copy.deepcopy(inject.released(root, assignment))
    solutions = inject.answers(root, assignment)
    for cell in notebook.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = f"grade_id = {grade_id!r}\nexec({_READERS[channel]})"
    return inject.insert(notebook, _HELPERS.format(token=token), "after_tools")
