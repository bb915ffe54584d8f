"""An S3-compatible object store on 127.0.0.1 under a directory of its own: SeaweedFS's `weed
server` with its S3 gateway (docs/lakehouse.md, "The warehouse on an object store").

``scripts/install_object_store.sh`` builds the pinned version into
``~/.cache/cdc-lakehouse/object-store/weed-<version>`` (:func:`weed_binary` finds it). An
:class:`ObjectStore` starts one server process that runs SeaweedFS's master, volume server,
filer and S3 gateway, every one of them on 127.0.0.1 (``-ip.bind``), each HTTP and gRPC port a
free one (chosen again if another process took one before the server bound it), its data, logs
and its own Unix sockets under ``<directory>/object-store`` (but for the gRPC ports' sockets,
which it always makes in /tmp: :meth:`ObjectStore.stop` removes them), its telemetry off. Its
only credentials are an access key and secret generated per start, given to the server through
its environment (no file holds them); without credentials the gateway would take any request,
so :meth:`ObjectStore.start` checks that an unsigned one is refused. ``bucket`` is created at
start.

:class:`S3` is a small client of the S3 protocol (AWS Signature Version 4, path-style
addresses) for what the project itself does on the store: create the bucket, and list objects
(the tests read back what the lakehouse wrote).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import os
import secrets
import shutil
import signal
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from cdc_cluster.servers import LOOPBACK, STATE_FILE, Server, ServerError, free_port, stop_process_group

# The version scripts/install_object_store.sh pins (keep the two in step).
SEAWEEDFS_VERSION = "v0.0.0-20261109003541-7506e5f91cd6"
BIN_DIR_ENV = "CDC_OBJECT_STORE_BIN_DIR"
REGION = "us-east-1"  # SeaweedFS answers any region; the clients sign with this one
PORTS = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc")
S3_NAMESPACE = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def weed_binary() -> Path:
    """The pinned SeaweedFS binary, or ServerError naming the install script."""
    directory = Path(os.environ.get(BIN_DIR_ENV) or Path.home() / ".cache" / "cdc-lakehouse" / "object-store")
    binary = directory / f"weed-{SEAWEEDFS_VERSION}"
    if not os.access(binary, os.X_OK):
        raise ServerError(
            f"SeaweedFS {SEAWEEDFS_VERSION} is not installed ({binary}): run scripts/install_object_store.sh"
        )
    return binary


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy


class S3:
    """Requests to an S3 endpoint, signed with AWS Signature Version 4 (path-style: the bucket
    is the path's first segment)."""

    def __init__(self, endpoint: str, access_key: str, secret_key: str, region: str = REGION) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.access_key, self.secret_key, self.region = access_key, secret_key, region

    def request(
        self, method: str, path: str, query: dict[str, str] | None = None, body: bytes = b""
    ) -> tuple[int, bytes]:
        """Status and body of one signed request (an error status is returned, not raised)."""
        url = urllib.parse.urlsplit(self.endpoint)
        now = dt.datetime.now(dt.UTC)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        canonical_path = urllib.parse.quote(path, safe="/-_.~")
        canonical_query = "&".join(
            f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
            for k, v in sorted((query or {}).items())
        )
        payload = hashlib.sha256(body).hexdigest()
        headers = {"host": url.netloc, "x-amz-content-sha256": payload, "x-amz-date": stamp}
        signed = ";".join(sorted(headers))
        canonical = "\n".join(
            [
                method,
                canonical_path,
                canonical_query,
                "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
                signed,
                payload,
            ]
        )
        scope = f"{day}/{self.region}/s3/aws4_request"
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, digest])
        key = f"AWS4{self.secret_key}".encode()
        for part in (day, self.region, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
            f"SignedHeaders={signed}, Signature={signature}"
        )
        target = f"{self.endpoint}{canonical_path}" + (f"?{canonical_query}" if canonical_query else "")
        call = urllib.request.Request(target, data=body or None, method=method, headers=headers)
        try:
            with _DIRECT.open(call, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def create_bucket(self, bucket: str) -> None:
        status, body = self.request("PUT", f"/{bucket}")
        if status not in (200, 409):  # 409: BucketAlreadyOwnedByYou
            raise ServerError(f"cannot create the bucket {bucket}: HTTP {status} {body[:300]!r}")

    def list_keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key of `bucket` under `prefix` (ListObjectsV2, page after page)."""
        keys: list[str] = []
        token = None
        while True:
            query = {"list-type": "2", "prefix": prefix}
            if token:
                query["continuation-token"] = token
            status, body = self.request("GET", f"/{bucket}", query)
            if status != 200:
                raise ServerError(f"cannot list s3://{bucket}/{prefix}: HTTP {status} {body[:300]!r}")
            root = ElementTree.fromstring(body)
            keys += [e.text or "" for e in root.iter(f"{S3_NAMESPACE}Key")]
            token = root.findtext(f"{S3_NAMESPACE}NextContinuationToken")
            if root.findtext(f"{S3_NAMESPACE}IsTruncated") != "true" or not token:
                return keys


class ObjectStore(Server):
    """SeaweedFS (master, volume server, filer and S3 gateway in one `weed server` process) under
    ``<directory>/object-store``; the S3 endpoint is :attr:`endpoint`, the bucket `bucket`."""

    name = "object-store"
    start_timeout = 120.0

    def __init__(self, directory: str | Path, bucket: str = "lakehouse") -> None:
        super().__init__(directory)
        self.bucket = bucket
        self.binary = weed_binary()
        self.ports: dict[str, int] = {}
        self._choose_ports()
        self.access_key = "cdc" + secrets.token_hex(8)
        self.secret_key = secrets.token_urlsafe(30)

    def _choose_ports(self) -> bool:
        """New free ports for every service. A start that stopped on a port in use left state
        under `data` for its master's old port only (nothing was stored yet): it is removed."""
        if self.ports:
            shutil.rmtree(self.home / "data", ignore_errors=True)
        self.ports = {name: free_port() for name in PORTS}
        return True

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.ports['s3']}"

    @property
    def s3_port(self) -> int:
        return self.ports["s3"]

    def client(self) -> S3:
        return S3(self.endpoint, self.access_key, self.secret_key)

    def environment(self) -> dict[str, str]:
        """The variables by which the lakehouse reaches the bucket (docs/lakehouse.md): the
        credentials in the environment, as S3A reads them, never in a file."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": REGION,
            "CDC_S3_ENDPOINT": self.endpoint,
            "CDC_S3_PATH_STYLE": "true",
        }

    def _prepare(self) -> None:
        (self.home / "data").mkdir(exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)

    def _command(self) -> list[str]:
        p = self.ports
        return [
            str(self.binary),
            f"-logdir={self.home / 'logs'}",
            "server",
            f"-ip={LOOPBACK}",
            f"-ip.bind={LOOPBACK}",
            f"-dir={self.home / 'data'}",
            "-master.telemetry=false",
            f"-master.port={p['master']}",
            f"-master.port.grpc={p['master_grpc']}",
            "-master.volumeSizeLimitMB=1024",
            # As many 1 GB volumes as the disk holds: the default, 8, stops writes at 8 GB.
            "-volume.max=0",
            f"-volume.port={p['volume']}",
            f"-volume.port.grpc={p['volume_grpc']}",
            "-filer",
            f"-filer.port={p['filer']}",
            f"-filer.port.grpc={p['filer_grpc']}",
            f"-filer.localSocket={self.home / 'filer.sock'}",
            "-s3",
            f"-s3.port={p['s3']}",
            f"-s3.port.grpc={p['s3_grpc']}",
            f"-s3.ip.bind={LOOPBACK}",
            "-s3.port.iceberg=0",  # SeaweedFS's own Iceberg catalog: not used
            "-s3.port.lance=0",
            f"-s3.localSocket={self.home / 's3.sock'}",
        ]

    def _popen_options(self) -> dict[str, Any]:
        # The gateway's admin credentials: SeaweedFS takes them from its environment when it has
        # no identity file (docs/lakehouse.md).
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID=self.access_key, AWS_SECRET_ACCESS_KEY=self.secret_key)
        return {"env": env}

    def _ready(self) -> bool:
        try:
            status, _ = self.client().request("GET", "/")
        except OSError:  # not listening yet
            return False
        return status == 200

    def _after_start(self) -> None:
        anonymous = S3(self.endpoint, "anonymous", "not-the-secret")
        status, body = anonymous.request("PUT", f"/{self.bucket}")
        if status in (200, 409):
            raise ServerError(
                f"the object store took a request with wrong credentials (HTTP {status}): {body[:200]!r}"
            )
        self.client().create_bucket(self.bucket)

    def stop(self) -> None:
        """Stop the server: SIGTERM, SIGKILL after 10 s (its master and filer took longer than
        that to end on SIGTERM); then remove the Unix sockets of its gRPC ports, which `weed
        server` always makes under /tmp (``/tmp/seaweedfs-<service>-grpc-<port>.sock``, no
        option moves them) and leaves behind."""
        if self.process is not None:
            stop_process_group(self.process.pid, signal.SIGTERM, grace_seconds=10)
            self.process = None
            (self.home / STATE_FILE).unlink(missing_ok=True)
        for service in ("master", "volume", "filer", "s3"):
            Path(f"/tmp/seaweedfs-{service}-grpc-{self.ports[f'{service}_grpc']}.sock").unlink(
                missing_ok=True
            )

    def _state(self) -> dict[str, Any]:
        return {f"{name}_port": port for name, port in self.ports.items()} | {"bucket": self.bucket}
