# place: middle
import os
block = b"\0" * (1 << 20)
for directory in (".", "/tmp", os.path.expanduser("~"), "/dev/shm"):
    for number in range(100000):
        try:
            with open(os.path.join(directory, f"fill{number}"), "wb") as handle:
                for _ in range(64):
                    handle.write(block)
        except OSError:
            break
