"""Shared fixtures: one embedded lakehouse and one Spark session per test run.

Spark starts once (5-10 s) in the pytest process; landing (``python_ingest``
called in-process) and dbt (``dbtRunner``, in-process) reuse the same
session, exactly as the product runs them, against a fresh lakehouse in a
temporary directory (``$CDC_LAKEHOUSE_DIR``) whose metastore service starts
with that session and stops when the run ends. Tests that run the product in
processes of their own use lakehouses of their own (and stop their services).

The suite runs in two processes side by side (pytest-xdist, ``-n 2 --dist loadfile`` in
pyproject.toml): each runs ``pytest_configure`` itself, so each has its own lakehouse, Spark
session and dbt target and log directories, and a test file runs whole in one of them (its
module fixtures are built once). The longest files with lakehouses of their own go first
(``OWN_LAKEHOUSE_LONGEST_FIRST``), so that the two processes finish together. See
docs/testing.md.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cdc_tools.generators import generated_producers
from tests.helpers.pipeline_scenarios import PIPELINE_PRODUCERS
from tests.helpers.services import stop_services

ROOT = Path(__file__).resolve().parent.parent
UNIT_TESTS_ENV = "CDC_DBT_UNIT_TESTS"  # dbt_project.yml enables the dbt unit tests when it is true

# Test files whose tests use only lakehouses and servers of their own, longest first (on 2 cores):
# they are handed out first, so that the two test processes finish together. The other files
# share their process's lakehouse and keep their collection order, so that in each process
# they run in the same order relative to each other as in one process (some depend on it: the
# pipeline tests land sample files that tests/e2e/test_dbt_project.py lands again later, and
# expect them new). Keep the list in step with pytest's --durations.
OWN_LAKEHOUSE_LONGEST_FIRST = (
    # One unit of work (SHARED_WORK): the local reference, the object store and the cluster.
    "tests/e2e/test_object_store.py",
    "tests/e2e/test_cluster.py",
    "tests/e2e/test_shared_lakehouse.py",
    "tests/e2e/test_hostile_input.py",
    "tests/e2e/test_pipeline.py",
    "tests/e2e/test_landing_crashes.py",
    "tests/e2e/test_kafka_landing.py",
    "tests/e2e/test_real_producers.py",
    "tests/e2e/test_landing_watch.py",
    "tests/e2e/test_real_servers.py",
)


# Test files whose module fixtures share one session fixture's work: each group is one unit of
# work for pytest-xdist (FilesSharingWork), so its files run in one test process, which does
# that work once. The generated-traffic files (one per producer) and the one of live rows
# check every producer's generated traffic (fixture generated_traffic), and the pipeline files
# (one per producer) their scenarios (fixture pipeline_scenarios): all of it lands in two runs
# with one build after each (fixture shared_runs). The object-store and cluster files compare
# gold with one local build of the same messages (fixture local_reference).
SHARED_WORK = {
    **{f"tests/e2e/test_{producer}_generated.py": "shared runs" for producer in generated_producers()},
    "tests/e2e/test_generated_live_rows.py": "shared runs",
    **{f"tests/e2e/test_{producer}_pipeline.py": "shared runs" for producer in PIPELINE_PRODUCERS},
    # Both compare their gold with one build on a local warehouse (fixture local_reference).
    "tests/e2e/test_object_store.py": "local reference",
    "tests/e2e/test_cluster.py": "local reference",
}


def pytest_configure(config: pytest.Config) -> None:
    # Before anything can start Spark: every test run gets its own lakehouse.
    if "CDC_TEST_LAKEHOUSE_DIR" in os.environ:
        lakehouse = Path(os.environ["CDC_TEST_LAKEHOUSE_DIR"])
    else:
        lakehouse = Path(tempfile.mkdtemp(prefix="cdc-test-lakehouse-"))
        config.add_cleanup(lambda: shutil.rmtree(lakehouse, ignore_errors=True))
    # Last in, first out: the lakehouse's services stop before its directory goes.
    config.add_cleanup(lambda: stop_services(lakehouse))
    os.environ["CDC_LAKEHOUSE_DIR"] = str(lakehouse)
    os.environ.setdefault("CDC_SPARK_CORES", "2")
    os.environ.setdefault("CDC_SHUFFLE_PARTITIONS", "2")
    # Spark's interpreted operators and expressions: the same results, less compiling on the
    # suite's many cold JVMs (docs/testing.md, "Spark without generated code"). The hostile
    # input run keeps Spark's default (tests/e2e/test_hostile_input.py).
    os.environ.setdefault("CDC_SPARK_CODEGEN", "false")
    os.environ["DBT_PROFILES_DIR"] = str(ROOT)
    # dbt's target and log directories of this test process (not the project's target/ and
    # logs/, which the other test process, or a build by hand, writes at the same time).
    dbt_files = Path(tempfile.mkdtemp(prefix="cdc-test-dbt-"))
    config.add_cleanup(lambda: shutil.rmtree(dbt_files, ignore_errors=True))
    os.environ["DBT_TARGET_PATH"] = str(dbt_files / "target")
    os.environ["DBT_LOG_PATH"] = str(dbt_files / "logs")
    os.chdir(ROOT)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of OWN_LAKEHOUSE_LONGEST_FIRST first, in its order; then the others in their
    collection order; each file's tests in their own order."""
    rank = {path: number for number, path in enumerate(OWN_LAKEHOUSE_LONGEST_FIRST)}

    def file_rank(item: pytest.Item) -> int:
        relative = item.path.relative_to(ROOT).as_posix() if item.path.is_relative_to(ROOT) else ""
        return rank.get(relative, len(rank))

    items.sort(key=file_rank)  # stable: the other files keep their collection order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's `--dist loadfile`, except that the files of a SHARED_WORK group are one
    unit of work (in the place of the group's first file)."""
    from xdist.scheduler import LoadFileScheduling

    class FilesSharingWork(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_WORK.get(scope, scope)

    return FilesSharingWork(config, log)


@pytest.fixture(scope="session")
def lakehouse_dir() -> Path:
    return Path(os.environ["CDC_LAKEHOUSE_DIR"])


@pytest.fixture(scope="session")
def spark():
    from dbt.adapters.spark_embedded.python_submissions import active_session

    from python_ingest.profile import target_spark_parameters

    return active_session(target_spark_parameters())


@dataclass
class CommandResult:
    exit_code: int
    output: str


@pytest.fixture(scope="session")
def land(spark) -> Callable[..., CommandResult]:
    """Run ``python -m python_ingest land ...`` in-process (shared Spark session)."""
    from cdc_cli import main

    def run(*args: str | Path) -> CommandResult:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            code = main(["land", *map(str, args)])
        return CommandResult(code, buffer.getvalue())

    return run


@pytest.fixture(scope="session")
def dbt(spark) -> Callable[..., object]:
    """Run a dbt command in-process against the test lakehouse; fails the test if dbt fails.
    A `build` leaves the dbt unit tests out unless asked for them (`unit_tests=True`, which sets
    CDC_DBT_UNIT_TESTS=true for the command, as dbt_project.yml enables them): they check SQL
    against fixed inputs, so one run per suite (tests/e2e/test_dbt_project.py) is enough, and
    each costs a Spark query per build. Otherwise the variable is unset for the command, as for
    the suite's other in-process dbt (the pipeline's runner, test_dbt_project.py's callbacks):
    dbt re-parses the whole project whenever an environment variable that dbt_project.yml reads
    changes between two invocations, and unset and `false` count as different."""
    from dbt.cli.main import dbtRunner

    def run(*args: str, expect_success: bool = True, unit_tests: bool = False):
        project = [] if "--project-dir" in args else ["--project-dir", str(ROOT)]
        if "--project-dir" in args and "--target-path" not in args:
            # Another project's target/ of its own, as without $DBT_TARGET_PATH: the two
            # projects' partial parses do not overwrite each other.
            project = ["--target-path", str(Path(args[args.index("--project-dir") + 1]) / "target")]
        resource_types = {"--resource-type", "--exclude-resource-type", "--select", "-s"}
        if args and args[0] == "build" and not unit_tests and not resource_types.intersection(args):
            args = (*args, "--exclude-resource-type", "unit_test")
        previous = os.environ.get(UNIT_TESTS_ENV)
        if unit_tests:
            os.environ[UNIT_TESTS_ENV] = "true"
        else:
            os.environ.pop(UNIT_TESTS_ENV, None)
        try:
            result = dbtRunner().invoke([*args, *project, "--profiles-dir", str(ROOT), "--quiet"])
        finally:
            if previous is None:
                os.environ.pop(UNIT_TESTS_ENV, None)
            else:
                os.environ[UNIT_TESTS_ENV] = previous
        if expect_success and not result.success:
            failures = [
                f"{r.node.unique_id}: {r.status}: {(r.message or '')[:800]}"
                for r in getattr(result.result, "results", None) or []
                if str(r.status) in ("error", "fail", "runtime error")
            ]
            raise AssertionError(f"dbt {' '.join(args)} failed: {result.exception or failures}")
        return result

    return run


@pytest.fixture(scope="module")
def object_store(tmp_path_factory):
    """A real S3-compatible object store on 127.0.0.1 (SeaweedFS, cdc_cluster/object_store.py)
    under a directory of the module's, with a bucket and credentials of its own; stopped after
    the module. Skips (fails under CI) when it is not installed (scripts/install_object_store.sh)."""
    from cdc_cluster.object_store import ObjectStore
    from tests.helpers.real_servers import require_object_store

    require_object_store()
    server = ObjectStore(tmp_path_factory.mktemp("object-store"))
    with server:
        print(f"object store started in {server.started_in:.1f}s at {server.endpoint}")
        yield server
    assert not server.running


@pytest.fixture(scope="session")
def shared_runs(spark, land, dbt, tmp_path_factory) -> dict[str, object]:
    """Every producer's generated traffic (tests/helpers/generated_traffic.py) and each
    producer's pipeline scenario (`scenario` of tests/e2e/test_<producer>_pipeline.py), run
    side by side: every first run landed, one build, every second run, one build
    (tests/helpers/pipeline_scenarios.py); what each returned, by name. The files of
    SHARED_WORK check it."""
    import importlib

    from tests.helpers import generated_traffic
    from tests.helpers.pipeline_scenarios import run_scenarios

    scenarios = {"generated": functools.partial(generated_traffic.scenario, spark)}
    for producer in PIPELINE_PRODUCERS:
        module = importlib.import_module(f"tests.e2e.test_{producer}_pipeline")
        scenarios[producer] = functools.partial(module.scenario, spark)
    return run_scenarios(scenarios, land, dbt, tmp_path_factory.mktemp)


@pytest.fixture(scope="session")
def generated_traffic(shared_runs):
    """Every producer's generated traffic, landed in two runs with one build after each."""
    return shared_runs["generated"]


@pytest.fixture(scope="session")
def pipeline_scenarios(shared_runs):
    """What each producer's pipeline scenario returned, by producer."""
    return {producer: shared_runs[producer] for producer in PIPELINE_PRODUCERS}


@dataclass
class LocalReference:
    """What tests/e2e/test_object_store.py and tests/e2e/test_cluster.py compare their gold with."""

    generated: list[str]  # the `land` sources of the generated traffic, which they land too
    gold: dict[str, list]  # each gold table's rows (tests/e2e/test_cluster.py's GOLD)


@pytest.fixture(scope="session")
def local_reference(tmp_path_factory) -> LocalReference:
    """Every producer's sample messages and generated traffic landed and built with the local
    target on a local warehouse, each command in a process of its own as a user runs it
    (tests/e2e/test_cluster.py's `pipeline`), and its gold. A lakehouse that lands the same
    `generated` sources (the same files: a message's id is made of its file's path) builds the
    same gold on any warehouse and target. SHARED_WORK runs the files that use it in one test
    process, which builds it once."""
    from tests.e2e.test_cluster import GOLD, generated_sources, pipeline, run_watched
    from tests.helpers.lakehouse_query import queries

    generated = generated_sources(tmp_path_factory.mktemp("generated"))
    work = tmp_path_factory.mktemp("local-run")
    lakehouse = work / "lakehouse"
    try:
        for command in pipeline("local", work, generated):
            run_watched(command, lakehouse, {}, set(), set())
        gold = dict(zip(GOLD, queries(lakehouse, list(GOLD.values())), strict=True))
    finally:
        stop_services(lakehouse)
    return LocalReference(generated, gold)
