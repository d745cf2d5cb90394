#!/usr/bin/env bash
# Debian packages the integration tests talk to (real Prometheus and Alertmanager) and the
# browser the web UI tests drive (chromium, through Playwright).
# Installed when missing and we are root; otherwise the tests say what is missing.
set -euo pipefail
need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
command -v amtool >/dev/null 2>&1 || need+=(prometheus-alertmanager)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  mapfile -t pkgs < <(printf '%s\n' "${need[@]}" | sort -u)
  echo "installing ${pkgs[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
else
  echo "note: ${need[*]} missing and not root; tests that need them will say so" >&2
fi
