"""On the host: the seccomp program bwrap installs in every sandbox (``bwrap --seccomp FD``).

It refuses (EPERM):

- the kernel keyring calls (``add_key``, ``request_key``, ``keyctl``). Keyrings are the one
  piece of kernel state that namespaces do not separate for us: the user keyring of
  ``nobody`` is shared by every sandbox, those running in parallel and those that come
  later, so a student could leave answers there for another student to read;
- memory that the per-notebook address-space limit (``RLIMIT_AS``) does not count:
  ``memfd_create`` and ``memfd_secret`` (a memfd written with ``write`` holds pages that are
  mapped nowhere: one grew the host's shared memory 1.5 GiB past a 256 MiB limit), and
  System V shared memory and message queues (``shmget``, ``msgget``: segments and queues
  outlive their mappings). What is left that RLIMIT_AS does not see is bounded by size:
  the notebook's ``/tmp`` and ``/dev/shm`` (tmpfs of fixed sizes) and pipe buffers.

Nothing a notebook needs uses them (torch and Python's multiprocessing share memory through
files in ``/dev/shm``). Calls made through another ABI (32-bit ``int 0x80``, x32) are
refused as a whole: their numbers differ and nothing honest uses them.
"""
from __future__ import annotations

import errno
import platform
import struct

# Classic BPF as seccomp wants it: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}.
_LOAD_WORD = 0x20          # BPF_LD | BPF_W | BPF_ABS
_JUMP_IF_EQUAL = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_IF_AT_LEAST = 0x35   # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06             # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_REFUSE = 0x00050000 | errno.EPERM   # SECCOMP_RET_ERRNO
_NR_OFFSET, _ARCH_OFFSET = 0, 4      # fields of struct seccomp_data
_X32_BIT = 0x40000000

# machine -> (AUDIT_ARCH_* value, refused syscall numbers, whether x32 numbers exist).
# x86_64: add_key 248, request_key 249, keyctl 250, memfd_create 319, memfd_secret 447,
# shmget 29, msgget 68; aarch64: 217, 218, 219, 279, 447, 194, 186.
_TABLES = {
    "x86_64": (0xC000003E, (248, 249, 250, 319, 447, 29, 68), True),
    "aarch64": (0xC00000B7, (217, 218, 219, 279, 447, 194, 186), False),
}


class UnsupportedMachine(RuntimeError):
    pass


def _instruction(code: int, k: int, jump_true: int = 0, jump_false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def sandbox_filter(machine: str | None = None) -> bytes:
    """The compiled program for this machine's architecture."""
    machine = machine or platform.machine()
    if machine not in _TABLES:
        raise UnsupportedMachine(f"no seccomp table for {machine}: the sandbox cannot close the "
                                 f"keyring channel or count all memory on this architecture")
    arch, numbers, has_x32 = _TABLES[machine]
    body = [_instruction(_LOAD_WORD, _NR_OFFSET)]
    if has_x32:
        body.append(_instruction(_JUMP_IF_AT_LEAST, _X32_BIT, 0, 1))
        body.append(_instruction(_RETURN, _REFUSE))
    for number in numbers:
        body.append(_instruction(_JUMP_IF_EQUAL, number, 0, 1))
        body.append(_instruction(_RETURN, _REFUSE))
    body.append(_instruction(_RETURN, _ALLOW))
    head = [_instruction(_LOAD_WORD, _ARCH_OFFSET),
            _instruction(_JUMP_IF_EQUAL, arch, 1, 0),
            _instruction(_RETURN, _REFUSE)]
    return b"".join(head + body)
