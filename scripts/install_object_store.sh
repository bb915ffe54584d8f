#!/usr/bin/env bash
# Install the S3-compatible object store of the object-store tests (tests/e2e/test_object_store.py,
# cdc_cluster/object_store.py): SeaweedFS's `weed` server, built from its pinned Go module
# (Apache-2.0) with the machine's Go toolchain, into
# ${CDC_OBJECT_STORE_BIN_DIR:-~/.cache/cdc-lakehouse/object-store}/weed-<version>.
# Idempotent: with that binary there, it only checks. Exits 1 naming what is missing.
#
# Why a build and not `go install …/weed@<version>`: the module's go.mod has a replace directive,
# which `go install pkg@version` refuses; the same sources build in the module's own directory
# (the module cache), with its go.sum. The first build downloads the dependencies through the Go
# module proxy and compiles for several minutes; later runs find the binary.
set -euo pipefail

MODULE=github.com/seaweedfs/seaweedfs
# The pinned version (a pseudo-version of SeaweedFS's master branch, 2026-11-09). Changing it:
# docs/lakehouse.md, "The warehouse on an object store".
VERSION=v0.0.0-20261109003541-7506e5f91cd6

die() { echo "install_object_store: $*" >&2; exit 1; }

bin_dir=${CDC_OBJECT_STORE_BIN_DIR:-$HOME/.cache/cdc-lakehouse/object-store}
binary=$bin_dir/weed-$VERSION
if [ -x "$binary" ]; then
  echo "install_object_store: SeaweedFS $VERSION is installed ($binary)"
  exit 0
fi

command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] ||
  die "Go is required to build SeaweedFS $VERSION (no 'go' on PATH): install Go 1.26 or later."
GO=$(command -v go || echo /usr/local/go/bin/go)

mkdir -p "$bin_dir"
echo "install_object_store: building SeaweedFS $VERSION (Go module proxy; several minutes the first time)"
started=$(date +%s)
source_dir=$("$GO" mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$source_dir" ] && [ -d "$source_dir" ] || die "go mod download $MODULE@$VERSION failed."
partial=$binary.partial.$$
trap 'rm -f "$partial"' EXIT
# Without the compiler's optimizations and inlining (-N -l): the build takes about 0.7 of the CPU
# (373 against 535 CPU s on 2 cores), and the server's requests in a whole test run cost it 32
# CPU s instead of 24 (docs/testing.md, "Set-up beside the linters"). scripts/test.sh runs this
# beside set-up, at the same priority.
(cd "$source_dir" && GOFLAGS=-mod=readonly "$GO" build -trimpath -gcflags=all='-N -l' -o "$partial" ./weed) ||
  die "go build of $MODULE@$VERSION failed (see above)."
"$partial" version >/dev/null 2>&1 || die "the built binary does not run: $partial version failed."
mv "$partial" "$binary"
echo "install_object_store: installed $binary in $(( $(date +%s) - started )) s"
