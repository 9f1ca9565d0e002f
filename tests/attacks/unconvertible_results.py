# place: after_tools
# Results the host must rebuild, written straight to the grader's observation pipe before the
# probes send theirs (the host keeps the first result per case): a numpy void scalar of
# 1.5 GB (each took the host gigabytes and tens of seconds), an int of 4500 digits (Python's
# int() refuses it: ValueError) and an int8 of 1000 (OverflowError). Each host-side failure
# used to be an uncaught exception: the row stayed "grader error", graded again every run.
import gc

_channel = next(obj for obj in gc.get_objects() if type(obj).__name__ == "Channel")
_job = next(obj for obj in gc.get_objects() if type(obj) is dict and "cells" in obj and "files" in obj)
_forged = [{"kind": "npscalar", "dtype": "V1500000000", "value": 1500000000},
           {"kind": "bigint", "text": "9" * 4500},
           {"kind": "npscalar", "dtype": "int8", "value": 1000}]
_sent = 0
for _cell in _job["cells"]:
    for _number, _name, _args in _cell.get("calls", []):
        _channel.send(t="out", cell=_cell["index"], n=_number, value=_forged[_sent % 3])
        _sent += 1
