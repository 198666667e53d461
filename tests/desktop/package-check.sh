#!/usr/bin/env bash
# Checks the .deb that `npm run desktop:deb` built: its files (the app, stripped, which is also the
# `capa` CLI through the wrappers `capa` and `capabilities` beside it, the web UI and the search model in
# the app's resource dir, the desktop entry, the icons) and dependencies, then unpacks it and
# starts the unpacked app under the display it is given (scripts/test runs this with `xvfb-run -a`
# inside a D-Bus session): it must host the hub with the demo source, serve the UI it carries,
# found through Tauri's resource dir (`usr/lib/Capabilities/ui`) and not the repository's ui/dist,
# and the packaged `capa` must find the app's hub.
#   tests/desktop/package-check.sh [DEB]   (default: the .deb in target/dist/bundle/deb)
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "package check: $*" >&2; exit 1; }

deb=${1:-$(ls target/dist/bundle/deb/*.deb 2>/dev/null | head -n 1 || true)}
[ -n "$deb" ] || fail "no .deb in target/dist/bundle/deb (run npm run desktop:deb)"
echo "package check: $deb ($(du -h "$deb" | cut -f1), $(dpkg-deb -f "$deb" Installed-Size) KiB installed)"

contents=$(dpkg-deb -c "$deb")
# The search model (scripts/setup installs it into models/, tauri.bundle.json bundles it): Tauri's
# resource dir on Linux is /usr/lib/<productName>, so the app and `capa` find it at
# <exe dir>/../lib/Capabilities/models/all-MiniLM-L6-v2.
model=usr/lib/Capabilities/models/all-MiniLM-L6-v2
for file in usr/bin/capabilities-desktop \
            usr/bin/capa \
            usr/bin/capabilities \
            usr/lib/Capabilities/ui/index.html \
            "$model/config.json" \
            "$model/tokenizer.json" \
            "$model/model.safetensors" \
            usr/share/applications/Capabilities.desktop \
            usr/share/icons/hicolor/32x32/apps/capabilities-desktop.png \
            usr/share/icons/hicolor/128x128/apps/capabilities-desktop.png; do
  grep -qE "[ /]$file\$" <<<"$contents" || fail "/$file is not in the package"
done
grep -q 'usr/lib/Capabilities/ui/assets/index-.*\.js$' <<<"$contents" || fail "the UI's script is not in the package"
# The form the hub uses (scripts/model-pack.py): the vocabulary and the dense weights in Q8_0.
size=$(awk -v f="$model/model.safetensors" '$NF == f || $NF == "./" f { print $3 }' <<<"$contents")
[ "$size" = 24656840 ] || fail "/$model/model.safetensors is $size bytes, not 24656840 (the packed form)"
depends=$(dpkg-deb -f "$deb" Depends)
grep -q 'libwebkit2gtk-4.1' <<<"$depends" || fail "Depends lacks libwebkit2gtk-4.1: $depends"

root=$(mktemp -d)
app_pid=""
cleanup() {
  if [ -n "$app_pid" ]; then kill -TERM "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; fi
  rm -rf "$root"
}
trap cleanup EXIT
dpkg-deb -x "$deb" "$root/pkg"
# Every model file the package carries matches the sums scripts/setup checked it against, and
# model.safetensors is the recorded conversion (scripts/setup's model_packed_sha256).
(cd "$root/pkg/$model" && sha256sum --check --quiet --strict SHA256SUMS) || fail "the model files in /$model do not match its SHA256SUMS"
packed_sha256=$(sed -n 's/^model_packed_sha256=\([0-9a-f]\{64\}\)$/\1/p' scripts/setup)
[ -n "$packed_sha256" ] || fail "scripts/setup records no model_packed_sha256"
grep -qx "$packed_sha256  model.safetensors" "$root/pkg/$model/SHA256SUMS" \
  || fail "/$model/SHA256SUMS does not record the expected model.safetensors ($packed_sha256)"
# A stripped binary has no symbol table (`.symtab`) left.
if readelf -S "$root/pkg/usr/bin/capabilities-desktop" | grep -q '\.symtab'; then fail "/usr/bin/capabilities-desktop is not stripped"; fi
# One program: `capa` and `capabilities` are wrappers that run the app's binary as the CLI, not
# binaries of their own.
for name in capa capabilities; do
  wrapper="$root/pkg/usr/bin/$name"
  [ "$(stat -c %s "$wrapper")" -lt 4096 ] || fail "/usr/bin/$name is not the small wrapper ($(stat -c %s "$wrapper") bytes)"
  grep -q 'capabilities-desktop' "$wrapper" || fail "/usr/bin/$name does not run the app's binary"
done
[ "$(find "$root/pkg" -type f -size +1M -perm -u+x | wc -l)" = 1 ] \
  || fail "more than one large program in the package: $(find "$root/pkg" -type f -size +1M -perm -u+x)"
version=$("$root/pkg/usr/bin/capabilities" --version 2>&1) || fail "/usr/bin/capabilities does not run: $version"
[ "$version" = "$("$root/pkg/usr/bin/capa" --version 2>&1)" ] || fail "capabilities and capa differ: $version"
case "$version" in capabilities-desktop*) fail "/usr/bin/capabilities ran the app, not the command line: $version" ;; esac
printf 'options: { demo: true, toolExposure: code }\n' > "$root/capabilities.yaml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# From a directory without a ui/dist anywhere above it, and without CAPA_UI_DIR or CAPA_MODEL_DIR.
(cd "$root" && exec env -u CAPA_UI_DIR -u CAPA_MODEL_DIR CAPA_DATA_DIR="$root/data" CAPA_CONFIG_DIR="$root/config" \
  CAPA_NO_BROWSER=1 "$root/pkg/usr/bin/capabilities-desktop" --config "$root/capabilities.yaml" \
  --http "127.0.0.1:$port" --background > "$root/app.log" 2>&1) &
app_pid=$!
for _ in $(seq 1 300); do
  [ -s "$root/data/hub.json" ] && [ -s "$root/data/token" ] && break
  kill -0 "$app_pid" 2>/dev/null || { cat "$root/app.log" >&2; fail "the unpacked app exited"; }
  sleep 0.1
done
[ -s "$root/data/hub.json" ] || { cat "$root/app.log" >&2; fail "the unpacked app did not start its hub"; }
base="http://127.0.0.1:$port"
token=$(cat "$root/data/token")

served=$(curl -fsS "$base/app/") || fail "GET /app/ failed"
[ "$served" = "$(cat "$root/pkg/usr/lib/Capabilities/ui/index.html")" ] \
  || fail "/app/ is not the index.html the package carries: $served"
script=$(grep -o '/app/assets/index-[^"]*\.js' <<<"$served" | head -n 1)
curl -fsS "$base$script" | cmp -s - "$root/pkg/usr/lib/Capabilities/ui${script#/app}" \
  || fail "$script is not the script the package carries"

for _ in $(seq 1 100); do
  sources=$(curl -fsS -H "Authorization: Bearer $token" "$base/api/sources" || true)
  grep -q '"id":"demo"' <<<"$sources" && grep -q '"state":"ready"' <<<"$sources" && break
  sleep 0.1
done
grep -q '"state":"ready"' <<<"$sources" || fail "the demo source is not ready: $sources"
status=$(cd "$root" && CAPA_DATA_DIR="$root/data" CAPA_CONFIG_DIR="$root/config" \
  "$root/pkg/usr/bin/capa" --config "$root/capabilities.yaml" hub status 2>&1) \
  || fail "the packaged capa hub status failed: $status"
grep -q "$base" <<<"$status" || fail "the packaged capa does not find the app's hub: $status"
# The app's hub finds the model the package carries and embeds the demo's tools with it.
for _ in $(seq 1 600); do
  config=$(curl -fsS -H "Authorization: Bearer $token" "$base/api/config" || true)
  grep -q '"search":{"state":"on"' <<<"$config" && break
  grep -qE '"search":\{"state":"(off|failed)"' <<<"$config" && break
  sleep 0.1
done
grep -q '"search":{"state":"on"' <<<"$config" || fail "the unpacked app does not search by meaning with its model: $config"
echo "package check: the unpacked app hosts the hub at $base, serves its bundled UI and searches by meaning with its model; its capa finds it"
