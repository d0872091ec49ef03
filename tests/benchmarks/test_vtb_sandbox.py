"""The code tools' sandbox: hostile model code fails cleanly, as a tool error the model reads,
within small limits, and leaves the machine and the run as they were.

Limits are small (1 CPU second, 256-512 MB, 4 MB files) so the attacks stay cheap on a shared
2-core machine; each test asserts the limit was what stopped the code (a timeout is a failure).
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
import unittest
from dataclasses import replace
from pathlib import Path

from datbench_cli.benchmarks.vistoolbench.agent import protocol
from datbench_cli.benchmarks.vistoolbench.agent.calculator import calculate
from datbench_cli.benchmarks.vistoolbench.agent.sandbox import Limits, detect_isolation
from datbench_cli.benchmarks.vistoolbench.agent.tools import ToolSettings, TurnTools

LIMITS = Limits(
    cpu_seconds=1,
    wall_seconds=3.0,
    memory_mb=512,
    file_mb=4,
    max_files=8,
    max_output_chars=5000,
    max_dir_mb=16,
)
ISOLATION = detect_isolation(allow_unsafe=False)
# Generous: interpreter start-up plus the limit, on a busy machine.
BOUND = LIMITS.wall_seconds + 4.0


@unittest.skipIf(ISOLATION is None, "no network namespace can be made on this machine")
class SandboxTests(unittest.TestCase):
    def setUp(self) -> None:
        settings = ToolSettings(
            (protocol.IMAGE_TOOL, protocol.INTERPRETER_TOOL, protocol.CALCULATOR_TOOL),
            LIMITS,
            ISOLATION,
        )
        self.tools = TurnTools(settings, [("turn_0_image_0.png", _png())])
        self.addCleanup(self.tools.__exit__)

    def interpret(self, code: str) -> tuple[str, dict]:
        started = time.monotonic()
        outcome = self.tools.call(protocol.INTERPRETER_TOOL, {"code": code})
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, BOUND, "the sandbox did not stop the code within its limits")
        return outcome.content, outcome.record

    def assert_unharmed(self) -> None:
        content, record = self.interpret("print(6 * 7)")
        self.assertEqual(content, repr({"stdout": "42\n", "stderr": ""}))
        self.assertEqual(os.listdir(self.tools.workdir), ["turn_0_image_0.png"])

    def test_reading_etc_passwd_fails(self) -> None:
        content, _ = self.interpret("import io\nprint(io.open('/etc/passwd').read())")
        self.assertIn("PermissionError", content)
        self.assertNotIn("root:", content)
        self.assert_unharmed()

    def test_reading_the_users_files_and_environment_fails(self) -> None:
        with tempfile.TemporaryDirectory() as home:
            secret = Path(home) / "secret.txt"
            secret.write_text("s3cr3t-file")
            os.environ["DATBENCH_SANDBOX_TEST_SECRET"] = "s3cr3t-env"
            self.addCleanup(os.environ.pop, "DATBENCH_SANDBOX_TEST_SECRET", None)
            content, _ = self.interpret(
                f"import io, os\nprint(dict(os.environ))\nprint(io.open({str(secret)!r}).read())"
            )
            listing, _ = self.interpret(
                f"import os\nprint(os.listdir({home!r}), os.listdir(os.path.expanduser('~')))"
            )
        self.assertNotIn("s3cr3t", content)
        self.assertIn("PermissionError", content)
        self.assertIn("PermissionError", listing)
        self.assertNotIn("secret.txt", listing)

    def test_opening_a_socket_fails(self) -> None:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.2)
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]
        content, _ = self.interpret(
            f"import socket\ns = socket.socket()\ns.connect(('127.0.0.1', {port}))\nprint('connected')"
        )
        self.assertIn("PermissionError", content)
        self.assertNotIn("connected", content)
        with self.assertRaises(TimeoutError):
            listener.accept()

    def test_fork_bomb_fails(self) -> None:
        for code in (
            "import os\nwhile True:\n    os.fork()",
            "import subprocess\nsubprocess.run(['sh', '-c', ':(){ :|:& };:'])",
            "import threading, time\nfor _ in range(1000):\n"
            "    threading.Thread(target=time.sleep, args=(30,)).start()",
        ):
            content, _ = self.interpret(code)
            self.assertTrue("PermissionError" in content or "start new thread" in content, content)
        self.assert_unharmed()

    def test_allocating_10_gb_fails(self) -> None:
        content, _ = self.interpret("x = ' ' * (10 * 1024 ** 3)\nprint(len(x))")
        self.assertIn("MemoryError", content)
        self.assert_unharmed()

    def test_infinite_loop_is_stopped_by_the_cpu_limit(self) -> None:
        # A loaded shared machine may give the child a fraction of a core: the wall-clock limit
        # is raised so that the 1 s of CPU time, not the clock, is what stops the loop.
        self.tools.settings = replace(
            self.tools.settings, limits=replace(LIMITS, wall_seconds=40.0)
        )
        started = time.monotonic()
        outcome = self.tools.call(protocol.INTERPRETER_TOOL, {"code": "while True:\n    pass"})
        self.assertLess(time.monotonic() - started, 44.0)
        content, record = outcome.content, outcome.record
        self.assertEqual(record["sandbox"]["limit"], "cpu_time")
        self.assertIn("1 s of CPU time", content)
        self.assert_unharmed()

    def test_sleeping_forever_is_stopped_by_the_wall_clock(self) -> None:
        content, record = self.interpret("import time\ntime.sleep(3600)")
        self.assertEqual(record["sandbox"]["limit"], "wall_clock")
        self.assertIn("wall-clock", content)

    def test_writing_a_10_gb_file_fails(self) -> None:
        content, _ = self.interpret(
            "import io\nwith io.open('big.bin', 'wb') as f:\n"
            "    for _ in range(10 * 1024):\n        f.write(b'x' * 1024 * 1024)"
        )
        self.assertIn("File too large", content)
        big = self.tools.workdir / "big.bin"
        self.assertLessEqual(big.stat().st_size, LIMITS.file_mb * 1024 * 1024)

    def test_many_files_are_refused(self) -> None:
        content, _ = self.interpret(
            "import io\nfor i in range(100):\n    io.open(f'f{i}', 'wb').write(b'x' * 1024 * 1024)"
        )
        self.assertIn("writing more than 8 files", content)

    def test_printing_100_mb_is_cut(self) -> None:
        content, _ = self.interpret("print('x' * 100_000_000)")
        self.assertLess(len(content), LIMITS.max_output_chars + 500)
        self.assertIn("more characters cut by the sandbox", content)
        raw, _ = self.interpret(
            "import os\nfor _ in range(100):\n    os.write(1, b'y' * 1_000_000)"
        )
        self.assertLess(len(raw), LIMITS.max_output_chars + 500)
        self.assert_unharmed()

    def test_escaping_through_ctypes_or_symlinks_fails(self) -> None:
        content, _ = self.interpret("import ctypes\nprint(ctypes.CDLL(None).getpid())")
        self.assertIn("PermissionError", content)
        content, _ = self.interpret("import os\nos.symlink('/etc/passwd', 'p')")
        self.assertIn("PermissionError", content)
        self.assertFalse((self.tools.workdir / "p").exists())

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
        third = self.tools.call(protocol.IMAGE_TOOL, {"code": "print(sorted([2, 1]))"})
        self.assertIn("NameError", third.content)  # the official tools' builtins: no sorted
        self.assertIn("'ok': 'false'", third.content)


class CalculatorTests(unittest.TestCase):
    def test_official_grammar_without_eval(self) -> None:
        self.assertEqual(calculate("2 * (3 + 4) % 5")["result"], "4")
        self.assertEqual(calculate("sqrt(16) + exp(0)")["result"], "5.0")
        for hostile in ("__import__('os').system('id')", "9**9**9**9", "().__class__", "'a'*9"):
            result = calculate(hostile)
            self.assertEqual(result["status"], "error", hostile)
        self.assertEqual(calculate("2 ^ 3")["status"], "error")  # as officially: ^ is not power


def _png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 10, 10)).save(buffer, "PNG")
    return buffer.getvalue()


if __name__ == "__main__":
    unittest.main()
