#!/usr/bin/env bash
# Makes the base images deploy/ builds on, debian:bookworm and debian:bookworm-slim, without a
# container registry: `debootstrap --variant=minbase bookworm` from the Debian mirror apt uses,
# then `docker import`. Skips a tag that already exists. Needs root, debootstrap and a running
# Docker engine. Usage: tests/deploy/make_base_images.sh
set -euo pipefail

# The mirror apt already uses (deb822 or one-line sources), so no other host is contacted.
apt_mirror() {
  cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
    sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p; s/^deb \(http[^ ]*\/debian\) .*/\1/p' | head -1
}
mirror=${DEBIAN_MIRROR:-$(apt_mirror || true)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-${mirror}-security}

have() { docker image inspect "$1" >/dev/null 2>&1; }
if have debian:bookworm && have debian:bookworm-slim; then
  echo "base images: debian:bookworm and debian:bookworm-slim exist"
  exit 0
fi

root=$(mktemp -d /var/tmp/gpureduce-bookworm.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "base images: debootstrap --variant=minbase bookworm from $mirror (about 2 minutes)"
nice debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
  { tail -20 "$root.log"; echo "base images: ERROR: debootstrap failed" >&2; exit 1; }
rm -f "$root.log"

# Point apt at updates and security too, as Debian's own images do: the build stage then gets
# the same library versions as a patched Debian 12 host.
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# Containers have no init to restart services, and apt should not keep its downloads.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
echo 'APT::Install-Recommends "false";' >"$root/etc/apt/apt.conf.d/90gpureduce"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb

import_dir() { # DIR TAG: the folder as a one-layer image
  tar --numeric-owner -C "$1" -c . |
    docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$2" >/dev/null
  echo "base images: made $2 ($(docker image inspect -f '{{.Size}}' "$2" | awk '{printf "%.0f MiB", $1/1048576}'))"
}
have debian:bookworm || import_dir "$root" debian:bookworm

# slim, as Debian's -slim images: no documentation, manuals or translations, now or later.
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
have debian:bookworm-slim || import_dir "$root" debian:bookworm-slim
