"""dbt adapter plugin ``spark_embedded``: dbt-spark in the dbt process, with
in-process Python models and Iceberg behind Spark's session catalog.
See adapters/dbt-spark-embedded/README.md."""

from dbt.adapters.base import AdapterPlugin
from dbt.adapters.spark_embedded import bindings
from dbt.adapters.spark_embedded.connections import SparkEmbeddedCredentials
from dbt.adapters.spark_embedded.impl import SparkEmbeddedAdapter
from dbt.include import spark_embedded

bindings.install()

Plugin = AdapterPlugin(
    adapter=SparkEmbeddedAdapter,  # type: ignore[arg-type]
    credentials=SparkEmbeddedCredentials,
    include_path=spark_embedded.PACKAGE_PATH,
    dependencies=["spark"],
)
