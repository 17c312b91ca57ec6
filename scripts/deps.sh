#!/bin/sh
# Install the Debian packages stfs needs to build, test and demo, when they
# are missing.  Idempotent and quiet when everything is there.
#   STFS_DEPS_EXTRA="s3fs rclone"  adds packages (the bench uses this)
set -e
PKGS="gcc make pkg-config fuse3 libfuse3-dev libcurl4-openssl-dev
libjansson-dev libxml2-dev libcmocka-dev libyaml-dev python3 attr rsync
restic tar curl clang libclang-rt-14-dev procps prometheus libssl-dev
clang-format cppcheck clang-tidy libsystemd-dev systemd rsyslog
prometheus-node-exporter iproute2 nftables
maven openjdk-17-jdk-headless libkrb5-dev
openssl
$STFS_DEPS_EXTRA"
# openssl: test_cloud.sh's service-account keys and JWT checks; its Go
# emulators (amazon-ec2-metadata-mock, fake-gcs-server) are go-installed by
# the suite itself into ~/.cache/stfs-go
# node and npm run the S3 test server (s3rver); the machine may have its own
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
missing=""
for p in $PKGS; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$s" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
	command -v sudo >/dev/null || {
		echo "deps: not root and no sudo; install:$missing" >&2
		exit 1
	}
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing >/dev/null
