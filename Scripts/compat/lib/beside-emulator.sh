# Sourced by the compat scripts that compare Hearth with Google's Firestore emulator: builds
# hearth, starts `hearth serve` (project demo-diff, the rules file $hearth_rules if set) and the emulator
# on free ports, waits for both, and stops both on exit. Sets hport and eport. Needs the emulator
# from the Google Cloud SDK (gcloud components install cloud-firestore-emulator, or Debian's
# google-cloud-cli-firestore-emulator) and Java.
emulator="${FIRESTORE_EMULATOR_BIN:-/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud_firestore_emulator}"
[[ -x "$emulator" ]] || { echo "error: no Firestore emulator at $emulator (set FIRESTORE_EMULATOR_BIN)" >&2; exit 1; }
command -v java >/dev/null || { echo "error: the Firestore emulator needs java" >&2; exit 1; }
swift build -c release --product hearth >&2
swift build -c release --product EchoUnit >&2
bin="$PWD/.build/release"
work="$(mktemp -d)"
source Scripts/bench/lib/free-port.sh
hport=$(free_port); eport=$(free_port)
cat > "$work/runtime.toml" <<TOML
project = "demo-diff"
units_dir = "$bin"
units = ["EchoUnit"]
data_dir = "$work/data"
[server]
port = $hport
[log]
level = "warning"
TOML
if [[ -n "${hearth_rules:-}" ]]; then printf '[firestore]\nrules = "%s"\n' "$hearth_rules" >> "$work/runtime.toml"; fi
"$bin/hearth" serve --config "$work/runtime.toml" 2>"$work/hearth.log" &
hearth=$!
"$emulator" start --host=127.0.0.1 --port="$eport" >"$work/emulator.log" 2>&1 &
emu=$!
# The emulator's launcher starts java as a child of its own: stopped by its port, whatever its parent.
trap 'kill $hearth $emu 2>/dev/null; pkill -f -- "--port=$eport" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$hport/healthz" >/dev/null 2>&1 && curl -sf "http://127.0.0.1:$eport/" >/dev/null 2>&1 && break
    kill -0 "$hearth" 2>/dev/null || { echo "error: hearth serve stopped:" >&2; cat "$work/hearth.log" >&2; exit 1; }
    sleep 0.2
done
