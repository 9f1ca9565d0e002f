# place: middle
import os
import sys
line = "flood " * 20000
try:
    while True:
        print(line)
        sys.stderr.write(line)
except OSError:
    pass
# Also try to flood every open descriptor, the observation channel included.
for fd in range(3, 64):
    try:
        for _ in range(2000):
            os.write(fd, (line + "\n").encode())
    except OSError:
        pass
