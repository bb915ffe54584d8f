"""The adapter plugin's and landing's configuration logic, without Spark."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from dbt.adapters.spark_embedded import jars, resolve_jars
from dbt.adapters.spark_embedded.class_archive import SPARK_DRIVER, archive_path
from dbt.adapters.spark_embedded.functions import functions_jar
from dbt.adapters.spark_embedded.impl import is_iceberg_information
from dbt.adapters.spark_embedded.jars import CACHE_ENV
from dbt.adapters.spark_embedded.lakehouse import (
    ICEBERG_JAR_ENV,
    LakehouseConfigError,
    iceberg_jar,
    spark_parameters,
)
from dbt.adapters.spark_embedded.local_files import FILE_SYSTEM, LOCAL_FILE_SYSTEM_CLASS, local_files_jar

from python_ingest.bronze import BRONZE_FORMATS, bronze_table
from python_ingest.profile import ProfileError, load_target, target_spark_parameters
from python_ingest.profile import lakehouse_dir as target_lakehouse_dir

ROOT = Path(__file__).resolve().parents[2]


def test_the_iceberg_jar_is_the_pinned_coordinate_from_the_jar_cache() -> None:
    assert jars.COORDINATES["iceberg"] == "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.2"
    jar = Path(iceberg_jar())  # set-up resolved it
    assert jar.is_file() and jar.is_relative_to(jars.cache_dir())
    assert jar.name == "org.apache.iceberg_iceberg-spark-runtime-4.0_2.13-1.10.2.jar"


def test_a_jar_missing_from_the_cache_names_its_coordinate_and_set_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(jars.CACHE_ENV, str(tmp_path / "empty-cache"))
    with pytest.raises(
        LakehouseConfigError, match=r"iceberg-spark-runtime-4.0_2.13:1.10.2 is not in the jar cache .*setup"
    ):
        spark_parameters({})


def test_resolving_a_coordinate_that_does_not_exist_fails_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark's resolver against an empty cache and a repository that does not answer: the
    run stops with one line naming the coordinate (no network is needed to see it fail)."""
    monkeypatch.setenv(jars.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(jars.REPOSITORIES_ENV, "http://127.0.0.1:9/nothing-here")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.m2 to find it in
    monkeypatch.setitem(jars.COORDINATES, "iceberg", "org.example.none:no-such-artifact:0.0.1")
    assert resolve_jars.main([]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert error.startswith("setup: cannot resolve org.example.none:no-such-artifact:0.0.1")


def test_jar_override_by_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jar = tmp_path / "my-iceberg.jar"
    jar.write_bytes(b"PK")
    monkeypatch.setenv(ICEBERG_JAR_ENV, str(jar))
    params = spark_parameters({"spark.jars": "/opt/extra.jar"})
    assert params["spark.jars"] == f"/opt/extra.jar,{jar},{functions_jar()}"


def test_the_functions_jar_is_built_once_from_the_java_sources(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The lakehouse's SQL functions (adapters/dbt-spark-embedded, functions.py): compiled on
    first use into the jar cache, named by the sources' hash, then only found."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    jar = Path(functions_jar())
    assert jar.parent == tmp_path / "functions" and jar.name.startswith("cdc-functions-")
    with zipfile.ZipFile(jar) as archive:
        assert "cdc/lakehouse/functions/IsJsonObject.class" in archive.namelist()
    built = jar.stat().st_mtime_ns
    assert functions_jar() == str(jar) and jar.stat().st_mtime_ns == built
    assert list(jar.parent.iterdir()) == [jar]  # no part file left behind


def test_jar_override_that_is_not_a_file_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ICEBERG_JAR_ENV, "/no/such/iceberg.jar")
    with pytest.raises(LakehouseConfigError, match="not a file"):
        spark_parameters({})


def test_lakehouse_paths_are_absolute_and_under_one_directory(tmp_path: Path) -> None:
    os.chdir(tmp_path)
    params = spark_parameters({"spark.sql.session.timeZone": "UTC"}, lakehouse_dir="lh")
    root = str(tmp_path / "lh")
    assert params["spark.sql.warehouse.dir"] == f"{root}/warehouse"
    assert params["spark.cdc.lakehouseDir"] == root  # its metastore service's lakehouse
    assert "spark.hadoop.hive.metastore.uris" not in params  # filled in when a session starts
    assert params["spark.sql.session.timeZone"] == "UTC"
    os.chdir(ROOT)


def test_profile_settings_win_over_derived_ones(tmp_path: Path) -> None:
    params = spark_parameters({"spark.sql.warehouse.dir": "hdfs://namenode/wh"}, lakehouse_dir=str(tmp_path))
    assert params["spark.sql.warehouse.dir"] == "hdfs://namenode/wh"


def fake_object_store_jars(monkeypatch: pytest.MonkeyPatch, cache: Path) -> list[str]:
    """A jar cache whose record names the S3A connector's jars (empty files): what
    ``resolve_jars --object-store`` leaves, without fetching 560 MB."""
    import json

    cache.mkdir()
    manifest = json.loads((jars.cache_dir() / jars.MANIFEST).read_text(encoding="utf-8"))
    files = [cache / "hadoop-aws-3.4.1.jar", cache / "bundle-2.24.6.jar"]
    for path in files:
        path.write_bytes(b"PK")
    manifest[jars.OBJECT_STORE_COORDINATES["s3a"]] = [str(p) for p in files]
    (cache / jars.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setenv(CACHE_ENV, str(cache))
    return [str(p) for p in files]


def test_an_s3a_warehouse_puts_the_s3a_connector_on_the_class_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    connector = fake_object_store_jars(monkeypatch, tmp_path / "cache")
    params = spark_parameters({"spark.sql.warehouse.dir": "s3a://bucket/wh"}, lakehouse_dir=str(tmp_path))
    assert params["spark.sql.warehouse.dir"] == "s3a://bucket/wh"
    assert params["spark.jars"].split(",")[-2:] == connector
    # Not on the driver's class path: it would go before pyspark's jars.
    assert not set(connector) & set(params["spark.driver.extraClassPath"].split(os.pathsep))
    # A local warehouse (the local target's empty $CDC_LAKEHOUSE_WAREHOUSE) needs none of it.
    params = spark_parameters({"spark.sql.warehouse.dir": ""}, lakehouse_dir=str(tmp_path))
    assert params["spark.sql.warehouse.dir"] == f"{tmp_path}/warehouse"
    assert connector[0] not in params["spark.jars"]


def test_an_s3a_warehouse_without_the_connector_names_the_step_that_fetches_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(jars.OBJECT_STORE_COORDINATES, "s3a", "org.example.none:no-such-connector:0.0.1")
    with pytest.raises(LakehouseConfigError, match=r"no-such-connector.*resolve_jars --object-store"):
        spark_parameters({"spark.sql.warehouse.dir": "s3a://bucket/wh"}, lakehouse_dir=str(tmp_path))


def test_an_s3_scheme_warehouse_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(LakehouseConfigError, match=r"write s3a://bucket/wh"):
        spark_parameters({"spark.sql.warehouse.dir": "s3://bucket/wh"}, lakehouse_dir=str(tmp_path))


def test_the_metastore_of_an_s3a_warehouse_gets_the_connector_and_the_s3a_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dbt.adapters.spark_embedded import services

    connector = fake_object_store_jars(monkeypatch, tmp_path / "cache")
    started = {}
    monkeypatch.setattr(
        services, "ensure_metastore", lambda *args: started.setdefault("args", args) and "thrift://x:1"
    )
    params = {
        "spark.cdc.lakehouseDir": str(tmp_path),
        "spark.sql.warehouse.dir": "s3a://bucket/wh",
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.endpoint.region": "",
    }
    assert services.with_services(params)["spark.hadoop.hive.metastore.uris"] == "thrift://x:1"
    lakehouse, warehouse, s3a = started["args"]
    assert (lakehouse, warehouse) == (str(tmp_path), "s3a://bucket/wh")
    assert s3a == {"fs.s3a.endpoint": "http://127.0.0.1:9000", "fs.s3a.path.style.access": "true"}
    classpath = services.object_store_classpath(tmp_path, warehouse, s3a)
    assert classpath[1:] == connector
    site = (Path(classpath[0]) / "core-site.xml").read_text()
    assert "<name>fs.s3a.endpoint</name><value>http://127.0.0.1:9000</value>" in site
    assert "secret" not in site and "access.key" not in site


@pytest.mark.parametrize(
    ("information", "expected"),
    [
        ("Provider: hive\nTable Properties: [owner=root, table_type=ICEBERG, uuid=1]\n", True),
        ("Provider: iceberg\n", True),
        ("Provider: hive\nTable Properties: [owner=root]\n", False),
        ("Type: VIEW\nView Text: select 1\n", False),
        ("Type: VIEW\nTable Properties: [engine_version=Spark 4.0.5, table_type=ICEBERG-VIEW]\n", False),
        ("Provider: hive\nTable Properties: [table_type=ICEBERG-VIEW, uuid=1]\n", False),
        (None, False),
    ],
)
def test_iceberg_tables_are_recognised_behind_the_session_catalog(information, expected) -> None:
    assert is_iceberg_information(information) is expected


def test_local_profile_renders_with_defaults_and_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("CDC_LAKEHOUSE_DIR", str(tmp_path / "lake"))
    monkeypatch.setenv("CDC_SHUFFLE_PARTITIONS", "3")
    params = target_spark_parameters("local", ROOT)
    assert params["spark.sql.shuffle.partitions"] == "3"
    assert params["spark.sql.session.timeZone"] == "UTC"
    assert params["spark.sql.catalog.spark_catalog"] == "org.apache.iceberg.spark.SparkSessionCatalog"
    assert params["spark.sql.ansi.enabled"] == "false"  # Spark 4's default is on
    assert params["spark.hadoop.iceberg.engine.hive.lock-enabled"] == "false"
    assert params["spark.sql.warehouse.dir"] == str(tmp_path / "lake" / "warehouse")
    assert "iceberg-spark-runtime-4.0_2.13" in params["spark.jars"]


def test_the_profiles_codegen_setting_turns_both_kinds_of_generated_code_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("CDC_LAKEHOUSE_DIR", str(tmp_path / "lake"))
    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("CDC_WAREHOUSE_URI", "file:/tmp/warehouse")
    monkeypatch.setenv("CDC_METASTORE_URI", "thrift://127.0.0.1:9083")
    for target in ("local", "cluster"):
        monkeypatch.delenv("CDC_SPARK_CODEGEN", raising=False)  # Spark's defaults
        params = target_spark_parameters(target, ROOT)
        assert params["spark.sql.codegen.wholeStage"] == "true", target
        assert params["spark.sql.codegen.factoryMode"] == "FALLBACK", target
        monkeypatch.setenv("CDC_SPARK_CODEGEN", "false")  # as the test suite runs
        params = target_spark_parameters(target, ROOT)
        assert params["spark.sql.codegen.wholeStage"] == "false", target
        assert params["spark.sql.codegen.factoryMode"] == "NO_CODEGEN", target


def test_local_spark_writes_through_the_lakehouses_local_file_system_and_a_cluster_through_hadoops(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """A local master's driver gets the jar of LakehouseLocalFileSystem on its class path and
    that class for `file:`; a cluster's driver gets the jar too (its class archive is made with
    it there), its executors' file system stays Hadoop's."""
    monkeypatch.setenv("CDC_LAKEHOUSE_DIR", str(tmp_path / "lake"))
    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("CDC_WAREHOUSE_URI", "file:/tmp/warehouse")
    monkeypatch.setenv("CDC_METASTORE_URI", "thrift://127.0.0.1:9083")
    jar = local_files_jar()
    with zipfile.ZipFile(jar) as archive:
        assert f"{LOCAL_FILE_SYSTEM_CLASS.replace('.', '/')}.class" in archive.namelist()
    local, cluster = target_spark_parameters("local", ROOT), target_spark_parameters("cluster", ROOT)
    assert local[FILE_SYSTEM] == LOCAL_FILE_SYSTEM_CLASS
    assert FILE_SYSTEM not in cluster
    for params in (local, cluster):
        assert params["spark.driver.extraClassPath"] == jar
        archive = f"-XX:SharedArchiveFile={archive_path(SPARK_DRIVER, jar)}"
        assert archive in params["spark.driver.extraJavaOptions"].split()
    # A profile that sets the driver's class path without the jar keeps Hadoop's file system.
    params = spark_parameters(
        {"spark.master": "local[2]", "spark.driver.extraClassPath": "/opt/mine.jar"}, str(tmp_path)
    )
    assert params["spark.driver.extraClassPath"] == "/opt/mine.jar" and FILE_SYSTEM not in params


def test_the_sessions_jobs_share_the_cores_fairly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every target's Spark schedules the jobs running at once fairly: its default pool (where
    every job goes) is FAIR in the pools file the package ships, and a profile can override."""
    import xml.etree.ElementTree as ElementTree

    monkeypatch.setenv("CDC_LAKEHOUSE_DIR", str(tmp_path))
    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("CDC_WAREHOUSE_URI", "file:/tmp/warehouse")
    monkeypatch.setenv("CDC_METASTORE_URI", "thrift://127.0.0.1:9083")
    for target in ("local", "cluster"):
        params = target_spark_parameters(target, ROOT)
        assert params["spark.scheduler.mode"] == "FAIR"
        pools = ElementTree.parse(params["spark.scheduler.allocation.file"]).getroot()
        modes = [(pool.get("name"), pool.findtext("schedulingMode")) for pool in pools]
        assert modes == [("default", "FAIR")]
    params = spark_parameters({"spark.master": "local[2]", "spark.scheduler.mode": "FIFO"}, str(tmp_path))
    assert params["spark.scheduler.mode"] == "FIFO"


def test_cluster_profile_needs_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CDC_SPARK_MASTER", "CDC_WAREHOUSE_URI", "CDC_METASTORE_URI"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProfileError, match="CDC_SPARK_MASTER"):
        load_target("cluster", ROOT)
    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://spark-master:7077")
    monkeypatch.setenv("CDC_WAREHOUSE_URI", "s3a://lake/warehouse")
    monkeypatch.setenv("CDC_METASTORE_URI", "thrift://metastore:9083")
    output = load_target("cluster", ROOT)
    assert output["server_side_parameters"]["spark.master"] == "spark://spark-master:7077"
    assert output["threads"] == "8"


def test_cluster_target_lands_into_its_metastore_and_keeps_checkpoints_in_its_lakehouse_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from dbt.adapters.spark_embedded.services import JVM_OPTIONS, LAKEHOUSE_CONF, with_services

    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://spark-master:7077")
    monkeypatch.setenv("CDC_WAREHOUSE_URI", "s3a://lake/warehouse")
    monkeypatch.setenv("CDC_METASTORE_URI", "thrift://metastore:9083")
    monkeypatch.setenv("CDC_LAKEHOUSE_DIR", str(tmp_path / "state"))
    params = target_spark_parameters("cluster", ROOT)
    assert params["spark.master"] == "spark://spark-master:7077"
    assert params["spark.sql.warehouse.dir"] == "s3a://lake/warehouse"
    assert params["spark.hadoop.hive.metastore.uris"] == "thrift://metastore:9083"
    assert params[LAKEHOUSE_CONF] == str(tmp_path / "state")
    assert "iceberg-spark-runtime-4.0_2.13" in params["spark.jars"]  # shipped to the executors
    assert "spark.driver.host" not in params and "spark.driver.bindAddress" not in params
    # The executors' JVMs compile and collect as the driver's do (services.JVM_OPTIONS).
    assert params["spark.executor.extraJavaOptions"].split() == list(JVM_OPTIONS)
    assert set(JVM_OPTIONS) <= set(params["spark.driver.extraJavaOptions"].split())
    assert with_services(params) == params  # the metastore is the cluster's: none is started
    assert not (tmp_path / "state" / "services").exists()
    assert target_lakehouse_dir("cluster", ROOT) == tmp_path / "state"


def object_store_endpoint(monkeypatch: pytest.MonkeyPatch, secret: str) -> None:
    """The environment of an S3-compatible endpoint on 127.0.0.1 and a secret key."""
    monkeypatch.setenv("CDC_S3_ENDPOINT", "http://127.0.0.1:8333")
    monkeypatch.setenv("CDC_S3_PATH_STYLE", "true")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)


def test_the_cluster_target_reaches_an_object_store_warehouse_with_the_s3a_connector(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    connector = fake_object_store_jars(monkeypatch, tmp_path / "cache")
    object_store_endpoint(monkeypatch, "not-in-the-settings")
    for name, value in {
        "CDC_SPARK_MASTER": "spark://127.0.0.1:7077",
        "CDC_WAREHOUSE_URI": "s3a://lakehouse/cluster",
        "CDC_METASTORE_URI": "thrift://127.0.0.1:9083",
        "CDC_LAKEHOUSE_DIR": str(tmp_path / "state"),
    }.items():
        monkeypatch.setenv(name, value)
    params = target_spark_parameters("cluster", ROOT)
    assert params["spark.jars"].split(",")[-2:] == connector  # the executors fetch them
    assert params["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:8333"
    assert params["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert "not-in-the-settings" not in str(params)  # credentials: the environment's only


def test_a_cluster_metastore_on_an_object_store_gets_the_connector_and_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from types import SimpleNamespace

    from cdc_cluster import standalone

    connector = fake_object_store_jars(monkeypatch, tmp_path / "cache")
    object_store_endpoint(monkeypatch, "not-in-the-files")
    postgres = SimpleNamespace(port=5432, database="metastore")
    metastore = standalone.Metastore(tmp_path / "cluster", postgres, "password", "s3a://lakehouse/cluster")
    metastore.home.mkdir(parents=True)  # as Server.start does
    metastore._prepare()
    site = (metastore.home / "metastore-conf" / "core-site.xml").read_text()
    assert "<name>fs.s3a.endpoint</name><value>http://127.0.0.1:8333</value>" in site
    assert "<name>fs.s3a.path.style.access</name><value>true</value>" in site
    assert "not-in-the-files" not in site + (metastore.home / "conf" / "hive-site.xml").read_text()
    command = metastore._command()
    classpath = command[command.index("-cp") + 1].split(os.pathsep)
    assert classpath[-2:] == connector  # after pyspark's jars
    assert str(metastore.home / "metastore-conf") in classpath[: classpath.index(connector[0])]
    assert "-Dhive.metastore.warehouse.dir=s3a://lakehouse/cluster" in command


def test_a_cluster_warehouse_that_is_not_s3a_is_refused_before_anything_starts(tmp_path) -> None:
    from cdc_cluster import standalone

    with pytest.raises(standalone.ServerError, match="not an s3a:// URI"):
        standalone.start(tmp_path / "cluster", warehouse="gs://bucket/cluster")
    assert not (tmp_path / "cluster" / "postgres").exists()


def test_thrift_target_cannot_land(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDC_THRIFT_HOST", "sts.example")
    with pytest.raises(ProfileError, match="method: session"):
        target_spark_parameters("thrift", ROOT)


@pytest.mark.parametrize("source_format", BRONZE_FORMATS)
def test_bronze_tables_follow_the_contract(source_format: str) -> None:
    table = bronze_table(source_format)
    assert table.qualified_name == f"bronze.raw_{source_format}"
    assert table.columns == (
        ("message_id", "string"),
        ("source_uri", "string"),
        ("source_partition", "int"),
        ("source_offset", "bigint"),
        ("message_key", "string"),
        ("message_value", "string"),
        ("headers", "map<string,string>"),
        ("enqueued_at", "timestamp"),
        ("ingested_at", "timestamp"),
        ("ingest_batch_id", "string"),
    )
    assert "using iceberg" in table.create_statement()


def test_session_bindings_are_sql_literals() -> None:
    """Seed cells reach Spark as literals: an empty cell is NULL, not the text 'None'."""
    import dbt.adapters.spark_embedded  # noqa: F401  (installs the binding)
    from dbt.adapters.spark.session import SessionConnectionWrapper

    fix = SessionConnectionWrapper._fix_binding
    assert fix(None) == "null"
    assert fix("it's") == "'it\\'s'"
    assert fix("a\\b") == "'a\\\\b'"
    assert fix(3) == 3.0
