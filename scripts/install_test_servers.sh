#!/usr/bin/env bash
# Install the database servers of the real-producer test (tests/e2e/test_real_servers.py,
# tests/helpers/real_servers.py): Debian's `postgresql` and `mariadb-server`, each only when
# missing. The test starts its own servers under its own directory; the system services these
# packages bring are neither started nor enabled here (a package we install is stopped and
# disabled again, a service the machine already had is left alone). Idempotent: with both
# installed, it only checks. Needs root (or sudo) for apt-get; exits 1 naming what is missing
# when it cannot install.
set -euo pipefail

die() { echo "install_test_servers: $*" >&2; exit 1; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for package in postgresql mariadb-server; do
  installed "$package" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_test_servers: postgresql and mariadb-server are installed"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "no apt-get: install ${missing[*]} (Debian packages) by hand."
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  die "${missing[*]} missing, and installing needs root: sudo apt-get install -y ${missing[*]}"
fi

# Packages must not start their services: a policy-rc.d that forbids it (invoke-rc.d and
# deb-systemd-invoke ask it), unless the machine has one already; removed again on exit.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  "${as_root[@]}" sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
  trap '"${as_root[@]}" rm -f "$policy"' EXIT
fi

echo "install_test_servers: installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; then
  "${as_root[@]}" apt-get update -q >/dev/null
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed."
fi

# Should a service have started anyway, stop it, and do not start it at boot.
for package in "${missing[@]}"; do
  service=${package%-server}
  if [ -d /run/systemd/system ]; then
    "${as_root[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
  elif command -v service >/dev/null 2>&1; then
    "${as_root[@]}" service "$service" stop >/dev/null 2>&1 || true
  fi
  if command -v update-rc.d >/dev/null 2>&1; then
    "${as_root[@]}" update-rc.d "$service" disable >/dev/null 2>&1 || true
  fi
done
echo "install_test_servers: installed ${missing[*]}"
