# place: end
# Leaves this notebook's answers where a later notebook could pick them up: a folder in
# /tmp that the old wipe could not delete (read-only), /dev/shm, POSIX message queues and
# the kernel user keyring (shared by every sandbox of the same user). The test fills in
# ANSWERS_JSON and TOKEN.
import ctypes
import json
import os

answers = json.loads(ANSWERS_JSON)
token = "TOKEN"
libc = ctypes.CDLL(None, use_errno=True)
share = f"/tmp/share_{token}"
os.makedirs(share, exist_ok=True)
for grade_id, source in answers.items():
    data = source.encode()
    with open(f"{share}/{grade_id}.py", "w") as handle:
        handle.write(source)
    with open(f"/dev/shm/{token}_{grade_id}.py", "w") as handle:
        handle.write(source)
    queue = libc.mq_open(f"/{token}_{grade_id}".encode(), os.O_CREAT | os.O_WRONLY, 0o600, None)
    if queue >= 0:
        libc.mq_send(queue, data, len(data), 0)
    libc.syscall(248, b"user", f"{token}_{grade_id}".encode(), data, len(data), ctypes.c_int(-4))
os.chmod(share, 0o555)
