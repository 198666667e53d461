#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, the real Secret
# Service store the hub uses on Linux. Usage: tests/support/with-keyring.sh COMMAND [ARGS...]
# When called outside such a session it re-executes itself under dbus-run-session.
set -euo pipefail
if [ -z "${CAPA_KEYRING_SESSION:-}" ]; then
  export CAPA_KEYRING_SESSION=1
  # gnome-keyring keeps its files under $HOME: use a throwaway one so tests never touch a real keyring.
  export CAPA_TEST_KEYRING_HOME="${CAPA_TEST_KEYRING_HOME:-$(mktemp -d)}"
  export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
  exec env HOME="$CAPA_TEST_KEYRING_HOME" XDG_DATA_HOME="$CAPA_TEST_KEYRING_HOME/.local/share" \
    dbus-run-session -- "$0" "$@"
fi
# `--unlock` with a password on stdin starts the daemon and creates (or unlocks) the login keyring
# without a prompt (an empty password would prompt). Start no second daemon: it could take the bus
# name with a locked keyring, and every write would then wait for a prompt that cannot show.
eval "$(printf 'capa-test\n' | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)"
# Wait until the unlocked daemon owns the Secret Service name: a client that asks earlier makes
# D-Bus start a second, locked daemon, which then takes the name.
for _ in $(seq 1 100); do
  [ "$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
      --method org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null)" = "(true,)" ] && break
  sleep 0.05
done
# Wait until the Secret Service accepts a write (the daemon registers on the bus asynchronously).
for _ in $(seq 1 50); do
  if printf probe | secret-tool store --label=capa-probe capa-probe ready >/dev/null 2>&1; then
    secret-tool clear capa-probe ready >/dev/null 2>&1 || true
    break
  fi
  sleep 0.1
done
"$@"
