#!/usr/bin/env bash
# Fetches NVIDIA's `ptxas` 11.8 (Debian bookworm `non-free`, package `nvidia-cuda-toolkit`) into a
# scratch folder, WITHOUT touching the system's apt sources: a private apt configuration (its own
# sources file, lists and cache folders) downloads the .deb and `dpkg -x` unpacks it.
#
#   usage: fetch-ptxas.sh [DEST]      (DEST defaults to $SPOC_PTXAS_DIR, then /opt/spoc-ptxas)
#
# Afterwards `DEST/usr/bin/ptxas` exists and runs; the path is printed on stdout (last line).
# Idempotent: if DEST already holds a working ptxas, nothing is downloaded.
# Exits non-zero with a message on stderr on any failure.
set -euo pipefail

DEST="${1:-${SPOC_PTXAS_DIR:-/opt/spoc-ptxas}}"
PTXAS="$DEST/usr/bin/ptxas"
SUITE="${SPOC_PTXAS_SUITE:-bookworm}"
MIRROR="${SPOC_PTXAS_MIRROR:-http://deb.debian.org/debian}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

die() {
    echo "fetch-ptxas: $*" >&2
    exit 1
}

if [ -x "$PTXAS" ] && "$PTXAS" --version >/dev/null 2>&1; then
    echo "fetch-ptxas: already present" >&2
    echo "$PTXAS"
    exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found: this script needs a Debian-like system"
command -v dpkg >/dev/null || die "dpkg not found"
[ -r "$KEYRING" ] || die "$KEYRING missing (install debian-archive-keyring)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/spoc-ptxas.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/deb"
echo "deb [signed-by=$KEYRING] $MIRROR $SUITE non-free" >"$WORK/sources.list"

APT_OPTS=(
    -o "Dir::Etc::sourcelist=$WORK/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$WORK/lists"
    -o "Dir::Cache=$WORK/cache"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=$(id -un)"
)

echo "fetch-ptxas: reading the $SUITE non-free index from $MIRROR" >&2
apt-get "${APT_OPTS[@]}" -q update >&2 || die "apt-get update of the private non-free source failed"
(cd "$WORK/deb" && apt-get "${APT_OPTS[@]}" -q download nvidia-cuda-toolkit >&2) ||
    die "could not download nvidia-cuda-toolkit (is $MIRROR reachable?)"

DEB="$(ls "$WORK"/deb/nvidia-cuda-toolkit_*.deb 2>/dev/null | head -n1)"
[ -n "$DEB" ] || die "the download produced no nvidia-cuda-toolkit .deb"
dpkg -c "$DEB" >"$WORK/contents.txt" || die "dpkg -c $DEB failed"
grep -q '/usr/bin/ptxas$' "$WORK/contents.txt" || die "$DEB does not contain usr/bin/ptxas"

mkdir -p "$DEST" || die "cannot create $DEST"
dpkg -x "$DEB" "$WORK/unpacked" || die "dpkg -x $DEB failed"
mkdir -p "$DEST/usr/bin"
cp "$WORK/unpacked/usr/bin/ptxas" "$PTXAS" || die "cannot copy ptxas into $DEST"
chmod 0755 "$PTXAS"
"$PTXAS" --version >/dev/null 2>&1 || die "$PTXAS does not run"
echo "fetch-ptxas: installed $("$PTXAS" --version | tail -n1)" >&2
echo "$PTXAS"
