# place: after_tools
# Phone home: the test listens on the host's loopback (PORT) and counts connections.
import socket

for host in ("127.0.0.1", "10.0.2.2", "1.1.1.1"):
    try:
        socket.create_connection((host, PORT), timeout=1).sendall(b"hi")  # noqa: F821 - filled in by the test
    except Exception:
        pass
