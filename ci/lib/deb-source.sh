# deb-source.sh — sourced by the ci/ scripts that build a dependency from a
# Debian source package: installing build tools, and `apt-get source` from
# the machine's own suite or, with its own apt lists, from another one.
# The caller defines log(). A script keyed by its own hash hashes this file
# too ($DEB_SOURCE_LIB), so that changing it rebuilds the cache.
# shellcheck shell=bash

DEB_SOURCE_LIB=${BASH_SOURCE[0]}

# Installs the packages not installed yet (apt-get update once per run).
apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
            grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    [ -n "${ZLINK_APT_UPDATED:-}" ] || apt-get update -qq
    export ZLINK_APT_UPDATED=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}

# `apt-get source` needs deb-src entries; derive them from the machine's own
# deb entries, so that the sources match the mirror and snapshot it already
# uses (the same file ci/windows-deps.sh writes).
enable_deb_src() {
    if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list \
        /etc/apt/sources.list.d/; then
        return 0
    fi
    log "adding deb-src entries derived from the configured deb entries"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' \
            /etc/apt/sources.list.d/debian.sources \
            >/etc/apt/sources.list.d/zlink-deb-src.sources
    elif [ -f /etc/apt/sources.list ]; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
            >/etc/apt/sources.list.d/zlink-deb-src.list
    else
        log "no apt sources found to derive deb-src entries from"
        exit 1
    fi
    apt-get update -qq
    export ZLINK_APT_UPDATED=1
}

# The Debian archive the machine already uses (its mirror, or a snapshot),
# else Debian's own.
archive_uri() {
    local uri=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' \
            /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' \
            /etc/apt/sources.list)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}

# deb_source <dir> <package>... — unpacks the machine's own suite's source
# packages into dir, through the deb-src entries enable_deb_src adds.
# apt's output goes to dir/apt-source.log, shown if it fails.
deb_source() {
    local dir=$1
    shift
    enable_deb_src
    mkdir -p "$dir"
    # apt-get source as root warns that it cannot sandbox the download.
    (cd "$dir" && apt-get source -qq "$@" >"$dir/apt-source.log" 2>&1) ||
        { cat "$dir/apt-source.log" >&2; exit 1; }
}

# deb_source_from <suite> <dir> <package>... — the same from another suite
# (a newer release's package), with an apt configuration of its own in
# dir/apt: a deb-src entry for suite on the machine's archive, its own
# lists. The machine's sources and lists are not touched, and apt checks
# the archive's signature as usual.
deb_source_from() {
    local suite=$1 dir=$2
    shift 2
    local apt=$dir/apt
    mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
        "$(archive_uri) $suite main" >"$apt/$suite.list"
    local options=(-o Dir::Etc::SourceList="$apt/$suite.list"
        -o Dir::Etc::SourceParts="$apt/parts"
        -o Dir::State::Lists="$apt/lists"
        -o Dir::Cache="$apt/cache"
        -o APT::Sandbox::User=root)
    (apt-get "${options[@]}" update -qq &&
        cd "$dir" && apt-get "${options[@]}" source -qq "$@") \
        >"$dir/apt-source.log" 2>&1 ||
        { cat "$dir/apt-source.log" >&2; exit 1; }
}
