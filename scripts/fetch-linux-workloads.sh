#!/usr/bin/env bash
# Fetch the third-party program of the Linux workload set: Debian's busybox-static for armel
# at the version pinned in testbenches/linux/programs.json, into testbenches/linux/bin/busybox
# (gitignored, never committed). Verifies the .deb and the extracted binary against the
# sha256 sums of the manifest and refuses a mismatch. Does nothing when the verified binary
# is already there.
#
#   scripts/fetch-linux-workloads.sh
#
# Download: `apt-get download busybox-static:armel=VERSION` (needs the armel architecture in
# dpkg and an `apt-get update` after adding it: scripts/setup.sh does both); when apt no
# longer offers that version, the same .deb from snapshot.debian.org by its sha1 (`deb_sha1`
# of the manifest).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINUX="$ROOT/testbenches/linux"
MANIFEST="$LINUX/programs.json"
BIN="$LINUX/bin"

log() { echo "fetch-linux-workloads: $*" >&2; }
die() { log "$*"; exit 1; }

command -v python3 >/dev/null || die "python3 not found"
# package version deb_sha256 deb_sha1 sha256, from the manifest's "busybox" object.
read -r PKG VERSION DEB_SHA256 DEB_SHA1 SHA256 < <(python3 - "$MANIFEST" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["busybox"]
print(b["package"], b["version"], b["deb_sha256"], b["deb_sha1"], b["sha256"])
EOF
)

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$BIN/busybox" ] && [ "$(sha "$BIN/busybox")" = "$SHA256" ]; then
    exit 0
fi

mkdir -p "$BIN"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP" # apt-get download runs as _apt when it can

log "downloading $PKG:armel=$VERSION"
if ! (cd "$TMP" && apt-get download -q "$PKG:armel=$VERSION" >"$TMP/apt.log" 2>&1); then
    log "apt-get download failed ($(tail -1 "$TMP/apt.log")); trying snapshot.debian.org"
    command -v curl >/dev/null || die "curl not found for the snapshot.debian.org fallback"
    curl -fsSL -o "$TMP/$PKG.deb" "https://snapshot.debian.org/file/$DEB_SHA1" \
        || die "could not download $PKG $VERSION (armel) from apt or snapshot.debian.org"
fi
deb="$(find "$TMP" -maxdepth 1 -name '*.deb' | head -1)"
[ -n "$deb" ] || die "no .deb downloaded"
got="$(sha "$deb")"
[ "$got" = "$DEB_SHA256" ] || die "$(basename "$deb"): sha256 $got, but the manifest pins $DEB_SHA256; refusing it"

dpkg-deb -x "$deb" "$TMP/x"
got="$(sha "$TMP/x/bin/busybox")"
[ "$got" = "$SHA256" ] || die "bin/busybox of $(basename "$deb"): sha256 $got, but the manifest pins $SHA256; refusing it"
install -m 755 "$TMP/x/bin/busybox" "$BIN/busybox.tmp"
mv "$BIN/busybox.tmp" "$BIN/busybox"
log "installed testbenches/linux/bin/busybox ($PKG $VERSION, sha256 $SHA256)"
