"""The seccomp filter bwrap installs in the sandbox (``--seccomp FD``): no new processes or
threads, no memory held outside the address-space limit, and none of the kernel interfaces
image code never needs.

Why a second layer: ``RLIMIT_NPROC`` is not enforced for a process whose host uid is 0, which
is what the sandbox's uid maps to when root runs the agent, so a fork bomb would exhaust the
host's pids. The filter refuses process and thread creation to every caller, root or not. A
``memfd_create`` file or a System V shared memory segment holds memory that ``RLIMIT_AS`` does
not count once unmapped (a gigabyte under a 512 MB limit), and System V semaphore sets and
message queues are kernel memory it never counts (the kernel allows 32000 sets of 32000
semaphores, about 64 GB): all four are refused too, as are extended attributes, which the size
caps of the sandbox's tmpfs folders do not count (each folder took 3 GB of ``user.*``
attributes, about 6 GB of the host's kernel memory, in one call). POSIX message queues, inotify
instances, fanotify groups and queued real-time signals are counted per host user, across the
user namespace: a call holding them denied the agent's user (root) its own until the call
ended. The first three are refused here; the signals are bounded by ``RLIMIT_SIGPENDING``
(``sandbox_child.py``). Also refused: the calls container runtimes refuse by default for their
kernel attack surface: ``ptrace`` (it reaches bubblewrap's own process, pid 1 inside), io_uring, the
kernel keyrings (not namespaced), ``bpf`` and ``perf_event_open``. And sockets, of every family:
image code has no use for them in a sandbox without a network, ``AF_VSOCK`` ones are not held by
the network namespace (in a virtual machine they reach the hypervisor's host), and the data
queued in them is kernel memory outside ``RLIMIT_AS``: 470 MB in 30 unix socket pairs, 216 MB
in loopback TCP connections, in one call.
"""

from __future__ import annotations

import os
import struct

DENIED_SYSCALLS = ("clone", "clone3", "fork", "vfork")
MEMORY_SYSCALLS = (
    "memfd_create",
    "shmget",
    "semget",
    "msgget",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
)
PER_USER_SYSCALLS = ("mq_open", "inotify_init", "inotify_init1", "fanotify_init")
KERNEL_SYSCALLS = (
    "ptrace",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
)
SOCKET_SYSCALLS = ("socket", "socketpair")
# audit arch -> the numbers of the refused calls (aarch64 has no fork, vfork or inotify_init)
_SYSCALLS = {
    "x86_64": (
        0xC000003E,
        {
            "clone": 56,
            "clone3": 435,
            "fork": 57,
            "vfork": 58,
            "memfd_create": 319,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            "setxattr": 188,
            "lsetxattr": 189,
            "fsetxattr": 190,
            "setxattrat": 463,
            "mq_open": 240,
            "inotify_init": 253,
            "inotify_init1": 294,
            "fanotify_init": 300,
            "ptrace": 101,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "perf_event_open": 298,
            "socket": 41,
            "socketpair": 53,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220,
            "clone3": 435,
            "memfd_create": 279,
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
            "setxattr": 5,
            "lsetxattr": 6,
            "fsetxattr": 7,
            "setxattrat": 463,
            "mq_open": 180,
            "inotify_init1": 26,
            "fanotify_init": 262,
            "ptrace": 117,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "perf_event_open": 241,
            "socket": 198,
            "socketpair": 199,
        },
    ),
}
_EPERM, _ENOSYS = 1, 38
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_X32_BIT = 0x40000000


def _bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The BPF program bwrap installs (``--seccomp FD``), or ``None`` on an unknown machine.

    Other architectures (32-bit compat) and x32 calls get ENOSYS for everything; ``clone3``
    gets ENOSYS (its flags are out of a filter's reach, so libc falls back to ``clone``)."""
    machine = machine or os.uname().machine
    arch = _SYSCALLS.get(machine)
    if arch is None:
        return None
    audit_arch, numbers = arch
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    denied = [(nr, _ENOSYS if name == "clone3" else _EPERM) for name, nr in numbers.items()]
    program = [
        _bpf(ld_w_abs, 4),  # seccomp_data.arch
        _bpf(jeq_k, audit_arch, 1, 0),
        _bpf(ret_k, _RET_ERRNO | _ENOSYS),
        _bpf(ld_w_abs, 0),  # seccomp_data.nr
        _bpf(jge_k, _X32_BIT, 0, 1),
        _bpf(ret_k, _RET_ERRNO | _ENOSYS),
    ]
    for nr, errno in denied:
        program += [_bpf(jeq_k, nr, 0, 1), _bpf(ret_k, _RET_ERRNO | errno)]
    program.append(_bpf(ret_k, _RET_ALLOW))
    return b"".join(program)
