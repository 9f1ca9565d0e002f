# place: middle
# Memory the address-space limit (RLIMIT_AS) never sees: pages written into a memfd with
# write() are mapped nowhere. Before the seccomp filter refused memfd_create, this grew the
# host's shared memory 1.5 GiB past a --memory-mb 256 limit; System V segments and queues too.
import os
chunk = b"x" * (1 << 20)
fds = []
for _ in range(6):
    fd = os.memfd_create("hold")
    for _ in range(256):
        os.write(fd, chunk)
    fds.append(fd)
