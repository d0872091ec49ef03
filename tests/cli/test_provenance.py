"""Run directories that cannot destroy data, pinned sources, and the report's provenance block
(both benchmarks), through the command line."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

from datbench_cli.files.hub_layout import write_hub_dataset
from tests.cli_helpers import ROOT, SAMPLE, make_dataset, make_row, run_cli, tree_bytes

VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"
SHA = "0123456789abcdef0123456789abcdef01234567"
OLD_SHA = "fedcba9876543210fedcba9876543210fedcba98"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_args(target: str, run_dir: Path, *extra: str) -> list[str]:
    source = VTB_SAMPLE if target == "vistoolbench" else SAMPLE
    return ["export-tasks", target, "--source", str(source), "-d", str(run_dir), *extra]


def batch_line(sample_id: str, content: str, model: str) -> dict[str, Any]:
    return {
        "id": f"batch_{sample_id}",
        "custom_id": sample_id,
        "response": {
            "status_code": 200,
            "body": {"model": model, "choices": [{"message": {"content": content}}]},
        },
        "error": None,
    }


class _Case(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def assert_one_sentence(self, result: Any, *needles: str) -> None:
        self.assertEqual(result.exit_code, 2, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        for needle in needles:
            self.assertIn(needle, errors[0])

    def user_project(self) -> Path:
        project = self.tmp / "project"
        (project / "images").mkdir(parents=True)
        (project / "images" / "my_photo.jpg").write_bytes(b"\xff\xd8\xff my holiday")
        (project / "tasks.jsonl").write_text('{"my": "own tasks"}\n')
        return project


class DataLossTests(_Case):
    def test_export_into_a_users_folder_is_refused_and_leaves_it_byte_identical(self) -> None:
        for target in ("counting", "vistoolbench"):
            with self.subTest(target=target):
                project = self.user_project()
                before = tree_bytes(project)
                result = run_cli(*export_args(target, project))
                self.assert_one_sentence(result, "not empty", "--force")
                self.assertEqual(tree_bytes(project), before)
                # --force never overwrites the user's tasks.jsonl either.
                forced = run_cli(*export_args(target, project, "--force"))
                self.assert_one_sentence(forced, "would overwrite tasks.jsonl")
                self.assertEqual(tree_bytes(project), before)
                shutil.rmtree(project)

    def test_the_directory_is_refused_before_the_dataset_is_loaded(self) -> None:
        """The refusal came after loading: from the hub, after a download of minutes (with
        an unloadable source, the error named the source, not the directory)."""
        missing_source = str(self.tmp / "no-such-dataset")
        for target in ("counting", "vistoolbench"):
            with self.subTest(target=target):
                project = self.user_project()
                before = tree_bytes(project)
                result = run_cli(
                    "export-tasks", target, "--source", missing_source, "-d", str(project)
                )
                self.assert_one_sentence(result, str(project), "not empty", "--force")
                self.assertNotIn("loading", result.stderr)
                self.assertEqual(tree_bytes(project), before)
                shutil.rmtree(project)
        a_file = self.tmp / "notes.txt"
        a_file.write_text("mine\n")
        result = run_cli("export-tasks", "math", "--source", missing_source, "-d", str(a_file))
        self.assert_one_sentence(result, str(a_file), "not a directory")
        self.assertEqual(a_file.read_text(), "mine\n")

    def test_force_adds_the_export_beside_the_users_files(self) -> None:
        for target in ("counting", "vistoolbench"):
            with self.subTest(target=target):
                project = self.user_project()
                (project / "tasks.jsonl").unlink()
                photo = (project / "images" / "my_photo.jpg").read_bytes()
                result = run_cli(*export_args(target, project, "--force"))
                self.assertEqual(result.exit_code, 0, result.stderr)
                self.assertEqual((project / "images" / "my_photo.jpg").read_bytes(), photo)
                manifest = json.loads((project / "datbench.json").read_text())
                self.assertNotIn("images/my_photo.jpg", manifest["written"])
                # A re-export (here of less) still leaves the photo alone.
                again = run_cli(*export_args(target, project, "--limit", "1"))
                self.assertEqual(again.exit_code, 0, again.stderr)
                self.assertEqual((project / "images" / "my_photo.jpg").read_bytes(), photo)
                shutil.rmtree(project)

    def test_reexport_removes_only_the_files_the_previous_manifest_lists(self) -> None:
        for target in ("counting", "vistoolbench"):
            with self.subTest(target=target):
                run_dir = self.tmp / f"run-{target}"
                self.assertEqual(run_cli(*export_args(target, run_dir)).exit_code, 0)
                first = json.loads((run_dir / "datbench.json").read_text())["written"]
                mine = {
                    "images/keep_me.png": b"\x89PNG mine",
                    "notes.txt": b"my notes\n",
                    "responses.jsonl": b'{"id": "x", "raw_output": "y"}\n',
                }
                for name, data in mine.items():
                    (run_dir / name).write_bytes(data)
                result = run_cli(*export_args(target, run_dir, "--limit", "1"))
                self.assertEqual(result.exit_code, 0, result.stderr)
                second = json.loads((run_dir / "datbench.json").read_text())["written"]
                self.assertLess(len(second), len(first))
                files = {
                    p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()
                }
                self.assertEqual(files, {*second, "datbench.json", *mine})
                for name, data in mine.items():
                    self.assertEqual((run_dir / name).read_bytes(), data)
                for name, digest in second.items():
                    self.assertEqual(sha256(run_dir / name), digest, name)


class SourceTests(_Case):
    def test_a_missing_path_is_no_such_directory(self) -> None:
        # A bare name is no hub id either (owner/name): it went to the hub, "cannot reach".
        sources = ("./sample_data/datbench-typo", "/nonexistent/place", "a/b/c", "x.parquet", "foo")
        for source in sources:
            with self.subTest(source=source):
                result = run_cli(
                    "export-tasks", "math", "--source", source, "-d", str(self.tmp / "r")
                )
                self.assert_one_sentence(result, f"no such directory: {source}")
                self.assertNotIn("cannot reach", result.stderr)

    def test_a_parquet_file_says_to_pass_its_folder(self) -> None:
        parquet = SAMPLE / "math" / "test-00000-of-00001.parquet"
        result = run_cli("export-tasks", "math", "--source", str(parquet), "-d", str(self.tmp))
        self.assert_one_sentence(result, "parquet file", "dataset folder")

    def test_revision_is_for_hub_sources_only(self) -> None:
        result = run_cli(*export_args("math", self.tmp / "r", "--revision", "main"))
        self.assert_one_sentence(result, "--revision applies only to hub sources")

    def test_a_local_directory_is_pinned_by_a_digest_of_its_data_files(self) -> None:
        source = make_dataset(self.tmp, {"math": [make_row("m1"), make_row("m2")]})
        run_dir = self.tmp / "run"
        self.assertEqual(run_cli(*["export-tasks", "math", "--source", str(source),
                                   "-d", str(run_dir)]).exit_code, 0)  # fmt: skip
        manifest = json.loads((run_dir / "datbench.json").read_text())
        revision = manifest["revision"]
        files = sorted(["README.md", "math/test-00000-of-00001.parquet"])
        digest = hashlib.sha256(
            "".join(f"{name}\0{sha256(source / name)}\n" for name in files).encode()
        ).hexdigest()
        self.assertEqual(revision, {"requested": None, "resolved": f"sha256:{digest}",
                                    "how": "local-files"})  # fmt: skip
        self.assertEqual(manifest["reference"], "datologyai/DatBench@bd2ecaf")
        self.assertEqual(
            set(manifest["libraries"]), {"scipy", "lxml", "zss", "apted", "latex2sympy2",
                                         "rapidfuzz"})  # fmt: skip
        self.assertTrue(all(manifest["libraries"].values()))
        self.assertEqual(set(manifest["rows"]), {"m1", "m2"})
        self.assertNotEqual(manifest["rows"]["m1"], manifest["rows"]["m2"])

    def test_the_digest_does_not_depend_on_how_the_folder_is_spelled(self) -> None:
        # Given as a relative path, the digest hashed the data files' absolute paths (and the
        # card first instead of in name order): another pin for the same files.
        source = make_dataset(self.tmp, {"math": [make_row("m1")]})
        (self.tmp / "link").symlink_to(source)
        shutil.copytree(source, self.tmp / "copy")
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(self.tmp)
        resolved = set()
        for spelling in (str(source), "dataset", "./dataset/", "link", "copy"):
            run_dir = self.tmp / f"run-{len(resolved)}-{spelling.strip('./')}"
            result = run_cli("export-tasks", "math", "--source", spelling, "-d", str(run_dir))
            self.assertEqual(result.exit_code, 0, result.stderr)
            manifest = json.loads((run_dir / "datbench.json").read_text())
            resolved.add(manifest["revision"]["resolved"])
        self.assertEqual(len(resolved), 1, resolved)


class OfflineRevisionTests(_Case):
    """``--revision`` offline resolves against a snapshot in the test's own hub cache."""

    def build_cache(self) -> Path:
        home = self.tmp / "hf-home"
        repo = home / "hub" / "datasets--acme--bench"
        write_hub_dataset(repo / "snapshots" / SHA, {"math": [make_row("new1"), make_row("new2")]})
        write_hub_dataset(repo / "snapshots" / OLD_SHA, {"math": [make_row("old1")]})
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text(SHA)
        (repo / "refs" / "v1").write_text(OLD_SHA)
        return home

    def export(self, home: Path, run_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(home), "NO_COLOR": "1"}
        env.pop("HF_HUB_CACHE", None)
        env["HF_ENDPOINT"] = "http://127.0.0.1:9"  # never reached
        return subprocess.run(
            [sys.executable, "-m", "datbench_cli", "export-tasks", "math", "--source",
             "acme/bench", "-d", str(run_dir), *extra],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False,
        )  # fmt: skip

    def test_revisions_resolve_to_the_cached_commits(self) -> None:
        home = self.build_cache()
        for given, sha, ids in (
            (None, SHA, ["new1", "new2"]),
            ("main", SHA, ["new1", "new2"]),
            ("v1", OLD_SHA, ["old1"]),
            (OLD_SHA, OLD_SHA, ["old1"]),
        ):
            with self.subTest(revision=given):
                run_dir = self.tmp / f"run-{given}"
                result = self.export(home, run_dir, *(["--revision", given] if given else []))
                self.assertEqual(result.returncode, 0, result.stderr)
                manifest = json.loads((run_dir / "datbench.json").read_text())
                self.assertEqual(manifest["source"], "acme/bench")
                self.assertEqual(
                    manifest["revision"], {"requested": given, "resolved": sha, "how": "hub-cache"}
                )
                self.assertEqual(sorted(manifest["rows"]), ids)

    def test_an_unknown_revision_offline_is_one_sentence(self) -> None:
        result = self.export(self.build_cache(), self.tmp / "r", "--revision", "v9")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("HF_HUB_OFFLINE", result.stderr)
        self.assertNotIn("Traceback", result.stderr)


class _FakeHubProxy:
    """An HTTP proxy on 127.0.0.1 that answers the hub API itself: ``revision/<rev>`` of
    acme/bench with ``SHA``, anything else 404; records the URLs it was asked for."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                found = "/api/datasets/acme/bench/revision/" in self.path
                body = json.dumps({"id": "acme/bench", "sha": SHA} if found else {}).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                return None

        self.seen = seen
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _FakeHubProxy:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def env(self) -> dict[str, str]:
        env = {**os.environ, "HTTP_PROXY": f"http://127.0.0.1:{self.server.server_port}"}
        env.update({"HF_ENDPOINT": "http://hub.invalid", "HF_HUB_OFFLINE": "", "NO_COLOR": "1"})
        for name in ("NO_PROXY", "no_proxy", "http_proxy", "DATBENCH_SOURCE"):
            env.pop(name, None)
        return env


class HubProxyTests(_Case):
    """The hub is asked through the hub client, so proxy settings apply (hub.invalid has no
    address: without the proxy every call here would be "cannot reach")."""

    def test_a_revision_resolves_through_the_proxy(self) -> None:
        code = (
            "from datbench_cli.files.sources import resolve_hub_commit; "
            "print(resolve_hub_commit('acme/bench', 'v1'))"
        )
        with _FakeHubProxy() as proxy:
            result = subprocess.run(
                [sys.executable, "-c", code], env=proxy.env(), cwd=ROOT, capture_output=True,
                text=True, timeout=60, check=False,
            )  # fmt: skip
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), SHA)
        self.assertIn("http://hub.invalid/api/datasets/acme/bench/revision/v1", proxy.seen)

    def test_export_of_an_unknown_hub_dataset_through_the_proxy_is_one_sentence(self) -> None:
        with _FakeHubProxy() as proxy:
            result = subprocess.run(
                [sys.executable, "-m", "datbench_cli", "export-tasks", "math", "--source",
                 "acme/nothing", "-d", str(self.tmp / "r")],
                env=proxy.env(), cwd=ROOT, capture_output=True, text=True, timeout=60,
                check=False,
            )  # fmt: skip
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("error: no dataset 'acme/nothing' on the Hugging Face hub", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertTrue(any("acme/nothing" in url for url in proxy.seen))


class ReportProvenanceTests(_Case):
    def scored(self, target: str, responses: list[dict[str, Any]] | None = None) -> Path:
        run_dir = self.tmp / f"run-{target}"
        self.assertEqual(run_cli(*export_args(target, run_dir)).exit_code, 0)
        source = VTB_SAMPLE if target == "vistoolbench" else SAMPLE
        if responses is None:
            shutil.copy(source / "responses.jsonl", run_dir / "responses.jsonl")
        else:
            text = "".join(json.dumps(line) + "\n" for line in responses)
            (run_dir / "responses.jsonl").write_text(text)
        shutil.copy(source / "judge_responses.jsonl", run_dir / "judge_responses.jsonl")
        return run_dir

    def score(self, run_dir: Path, *more: str) -> tuple[Any, dict[str, Any]]:
        vtb = json.loads((run_dir / "datbench.json").read_text())["benchmark"] == "vistoolbench"
        extra = ("--turncase", "single-turn") if vtb else ("--sample-timeout", "20")
        result = run_cli("score", "-d", str(run_dir), *extra, *more)
        return result, json.loads((run_dir / "report.json").read_text())

    def test_the_provenance_block_matches_the_inputs(self) -> None:
        for target in ("all", "vistoolbench"):
            with self.subTest(target=target):
                run_dir = self.scored(target)
                result, report = self.score(run_dir)
                self.assertIn(result.exit_code, (0, 1), result.stderr)
                block = report["provenance"]
                manifest = json.loads((run_dir / "datbench.json").read_text())
                self.assertEqual(block["reference"], "datologyai/DatBench@bd2ecaf")
                self.assertEqual(block["version"], manifest["version"])
                self.assertEqual(block["dataset"]["source"], manifest["source"])
                self.assertEqual(
                    block["dataset"]["resolved_revision"], manifest["revision"]["resolved"]
                )
                self.assertEqual(block["dataset"]["manifest_sha256"],
                                 sha256(run_dir / "datbench.json"))  # fmt: skip
                for label, name in (
                    ("manifest", "datbench.json"),
                    ("references", "references.jsonl"),
                    ("responses", "responses.jsonl"),
                    ("judge_responses", "judge_responses.jsonl"),
                ):
                    self.assertEqual(block["inputs"][label]["sha256"], sha256(run_dir / name))
                self.assertEqual(set(block["libraries"]), set(manifest["libraries"]))
                self.assertFalse(block["options"]["strict_judge"])
                if target == "vistoolbench":
                    self.assertEqual(block["options"]["turncase"], "single-turn")
                else:
                    self.assertEqual(block["options"]["sample_timeout"], 20)
                    self.assertNotIn("jobs", block["options"])
                self.assertEqual(
                    block["images"], {"missing": 0, "changed": [], "checked": "size_time"}
                )

    def test_models_of_batch_lines_are_named_and_a_mix_is_a_warning(self) -> None:
        ids = [json.loads(line)["id"] for line in (SAMPLE / "responses.jsonl").open()]
        lines = [batch_line(i, "A", "model-a" if n % 3 else "model-b") for n, i in enumerate(ids)]
        run_dir = self.scored("all", lines)
        result, report = self.score(run_dir)
        models = report["provenance"]["inputs"]["responses"]["models"]
        self.assertEqual(set(models), {"model-a", "model-b"})
        self.assertEqual(sum(models.values()), len(ids))
        self.assertIn("mixes responses of 2 models", result.stderr)
        self.assertTrue(any("model-b" in w for w in report["provenance"]["warnings"]))

    def test_swapped_image_bytes_are_noticed(self) -> None:
        for target in ("all", "vistoolbench"):
            with self.subTest(target=target):
                run_dir = self.scored(target)
                image = sorted((run_dir / "images").rglob("*.png"))[0]
                image.write_bytes(image.read_bytes()[:-1] + b"\x00")
                result, report = self.score(run_dir)
                rel = image.relative_to(run_dir).as_posix()
                self.assertEqual(report["provenance"]["images"]["changed"], [rel])
                self.assertIn("changed since the export", result.stderr)

    def test_images_are_checked_by_size_and_time_unless_verify_images_is_given(self) -> None:
        for target in ("all", "vistoolbench"):
            with self.subTest(target=target):
                run_dir = self.scored(target)
                image = sorted((run_dir / "images").rglob("*.png"))[0]
                rel = image.relative_to(run_dir).as_posix()
                manifest = json.loads((run_dir / "datbench.json").read_text())
                self.assertEqual(manifest["image_sizes"][rel], image.stat().st_size)
                original, written_at = image.read_bytes(), image.stat().st_mtime_ns
                # Other bytes of the same size, the old modification time put back: the default
                # check (sizes and times) cannot tell; --verify-images reads the bytes.
                image.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
                os.utime(image, ns=(written_at, written_at))
                result, report = self.score(run_dir)
                self.assertEqual(report["provenance"]["images"]["changed"], [])
                self.assertEqual(report["provenance"]["images"]["checked"], "size_time")
                self.assertNotIn("verify_images", report["provenance"]["options"])
                result, report = self.score(run_dir, "--verify-images")
                self.assertEqual(report["provenance"]["images"]["changed"], [rel])
                self.assertEqual(report["provenance"]["images"]["checked"], "sha256")
                self.assertTrue(report["provenance"]["options"]["verify_images"])
                self.assertIn("changed since the export", result.stderr)
                # The same bytes written again later: read (newer than the manifest), unchanged.
                later = (run_dir / "datbench.json").stat().st_mtime_ns + 10**9
                image.write_bytes(original)
                os.utime(image, ns=(later, later))
                result, report = self.score(run_dir)
                self.assertEqual(report["provenance"]["images"]["changed"], [])
                # Other bytes written later: read and named, without --verify-images.
                image.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
                os.utime(image, ns=(later, later))
                result, report = self.score(run_dir)
                self.assertEqual(report["provenance"]["images"]["changed"], [rel])

    def test_responses_made_against_another_export_say_so(self) -> None:
        lines = [json.loads(line) for line in (SAMPLE / "responses.jsonl").open()]
        for line in lines[:3]:
            line["manifest_sha256"] = "ab" * 32
        lines.append({"id": "from_another_revision", "raw_output": "x"})
        run_dir = self.scored("all", lines)
        result, report = self.score(run_dir)
        self.assertIn("made against another export", result.stderr)
        warnings = " ".join(report["provenance"]["warnings"])
        self.assertIn("3 responses line(s)", warnings)
        self.assertIn("1 id(s) in the responses are not in this export", warnings)
        # Said once on stderr (it was said twice: here and as the scorer's unknown ids).
        self.assertNotIn("not in this export", result.stderr)
        self.assertEqual(result.stderr.count("1 response id(s) match no sample"), 1)


class ReplacedExportTests(_Case):
    """An export over another whose samples differ: the responses beside it are named."""

    def sources(self, target: str) -> tuple[Path, Path]:
        """Two versions of a source: the second with one sample's reference answer changed."""
        if target == "vistoolbench":
            import pyarrow as pa
            import pyarrow.parquet as pq

            folder = self.tmp / "vtb-changed"
            shutil.copytree(VTB_SAMPLE, folder)
            table = pq.read_table(folder / "test.parquet")
            rows = table.to_pylist()
            rows[0]["turn_golden_answers"] = ["another answer"] * len(rows[0]["turn_prompts"])
            pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), folder / "test.parquet")
            return VTB_SAMPLE, folder
        rows = {"counting": [make_row("c1"), make_row("c2", answer="no")]}
        first = make_dataset(self.tmp / "first", rows)
        rows["counting"][1]["answer"] = "yes"
        return first, make_dataset(self.tmp / "second", rows)

    def test_a_changed_export_names_the_responses_made_before_it(self) -> None:
        for target in ("counting", "vistoolbench"):
            with self.subTest(target=target):
                run_dir = self.tmp / f"run-{target}"
                before, after = self.sources(target)
                export = ["export-tasks", target, "-d", str(run_dir), "--source"]
                self.assertEqual(run_cli(*export, str(before)).exit_code, 0)
                ids = [json.loads(x)["id"] for x in (run_dir / "tasks.jsonl").open()]
                if target == "vistoolbench":
                    shutil.copy(VTB_SAMPLE / "responses.jsonl", run_dir / "responses.jsonl")
                else:
                    text = "".join(json.dumps({"id": i, "raw_output": "yes"}) + "\n" for i in ids)
                    (run_dir / "responses.jsonl").write_text(text)
                # The same data again: nothing changed, nothing said.
                same = run_cli(*export, str(before))
                self.assertEqual(same.exit_code, 0, same.stderr)
                self.assertNotIn("warning", same.stderr)
                self.assertNotIn("replaced", json.loads((run_dir / "datbench.json").read_text()))
                result = run_cli(*export, str(after))
                self.assertEqual(result.exit_code, 0, result.stderr)
                self.assertIn("this export replaced an earlier one, and 1 of the", result.stderr)
                manifest = json.loads((run_dir / "datbench.json").read_text())
                self.assertEqual(manifest["replaced"], {"changed_samples": 1})
                scored = run_cli("score", "-d", str(run_dir), "--allow-missing")
                report = json.loads((run_dir / "report.json").read_text())
                said = f"{run_dir / 'responses.jsonl'} was last written before this run"
                self.assertIn(said, scored.stderr)
                self.assertTrue(any(said in w for w in report["provenance"]["warnings"]))
                # Answered again (the file rewritten after the export): nothing said.
                (run_dir / "responses.jsonl").write_bytes(
                    (run_dir / "responses.jsonl").read_bytes()
                )
                scored = run_cli("score", "-d", str(run_dir), "--allow-missing")
                self.assertIn(scored.exit_code, (0, 1), scored.stderr)
                self.assertNotIn("was last written before", scored.stderr)


class CurrentRevisionRowTests(_Case):
    def test_vqa_v2_judge_rows_and_image_marker_questions_export_and_score(self) -> None:
        run_dir = self.tmp / "run"
        self.assertEqual(run_cli(*export_args("general", run_dir)).exit_code, 0)
        tasks = {
            json.loads(line)["id"]: json.loads(line)
            for line in (run_dir / "tasks.jsonl").read_text().splitlines()
        }
        references = {
            json.loads(line)["id"]: json.loads(line)
            for line in (run_dir / "references.jsonl").read_text().splitlines()
        }
        marked = [i for i in tasks if "image_marker" in i]
        self.assertEqual(len(marked), 2)
        for sample_id in marked:
            ref = references[sample_id]
            self.assertTrue(ref["question"].startswith("<image>\n"))
            fmt = ref["prompt_format"]
            self.assertEqual(tasks[sample_id]["question"],
                             fmt["prefix"] + ref["question"] + fmt["suffix"])  # fmt: skip
        shutil.copy(SAMPLE / "responses.jsonl", run_dir / "responses.jsonl")
        made = run_cli("make-judge-tasks", "-d", str(run_dir))
        self.assertEqual(made.exit_code, 0, made.stderr)
        judge_tasks = {
            json.loads(line)["id"]: json.loads(line)
            for line in (run_dir / "judge_tasks.jsonl").read_text().splitlines()
        }
        vqa = sorted(i for i in judge_tasks if "vqav2_judge" in i)
        self.assertEqual(len(vqa), 3)
        for sample_id in vqa:  # the JSON policy reaches the judge unchanged
            self.assertTrue(judge_tasks[sample_id]["judge_prompt"].endswith(
                '{"answer": true} or {"answer": false}.'))  # fmt: skip
        shutil.copy(SAMPLE / "judge_responses.jsonl", run_dir / "judge_responses.jsonl")
        scored = run_cli("score", "-d", str(run_dir), "-q")
        self.assertIn(scored.exit_code, (0, 1), scored.stderr)
        report = json.loads((run_dir / "report.json").read_text())
        results = {r["id"]: r for r in report["results"]}
        self.assertEqual([results[i]["score"] for i in vqa], [1.0, 0.0, 1.0])
        self.assertEqual({results[i]["metadata"]["eval_mode"] for i in vqa}, {"judge"})
        self.assertEqual([results[i]["score"] for i in sorted(marked)], [1.0, 0.0])


if __name__ == "__main__":
    unittest.main()
