"""Servers on 127.0.0.1, each in a process group of its own under a directory of its own
(cdc_cluster/servers.py, also the base class of the test servers), and the Spark standalone
cluster of the `cluster` target built from them (cdc_cluster/standalone.py,
``python -m python_ingest cluster start|status|stop DIR``)."""
