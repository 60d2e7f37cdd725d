#!/usr/bin/env bash
# The client the MCP conformance suite runs (its `--command`): the `perch` CLI, driven per
# scenario as a person would drive it. The suite appends the mock server's URL as the last
# argument and names the scenario in MCP_CONFORMANCE_SCENARIO (MCP_CONFORMANCE_PROTOCOL_VERSION:
# the revision it runs at; MCP_CONFORMANCE_CONTEXT: JSON with the scenario's data, such as the
# tool calls to make or a pre-registered OAuth client). Each run gets a data folder of its
# own, with the file key store and one MCP server, `conf`, at the suite's URL.
#
# Perch picks the protocol itself (server/discover, falling back to initialize), as it does
# for any server: nothing here tells it which revision the suite runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
url="${!#}"
scenario="${MCP_CONFORMANCE_SCENARIO:?the conformance suite sets MCP_CONFORMANCE_SCENARIO}"
perch="${PERCH_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/perch}"
[[ -x "$perch" ]] || { echo "conformance: no perch at $perch; run 'make app-debug' (or set PERCH_BIN)" >&2; exit 1; }

data="$(mktemp -d "${TMPDIR:-/tmp}/perch-conformance.XXXXXX")"
trap 'rm -rf "$data"' EXIT
export PERCH_DATA_DIR="$data" PERCH_KEY_STORE=file
json() { node "$here/json.mjs" "$@"; }
json config "$url" "$data/mcp_servers.json"

# The suite starts every scenario at once; on a small machine (2 cores) forty debug builds of
# Perch and their node servers at once starved the mock authorization servers, and token
# requests failed at random. At most SLOTS clients run at a time (a lock file each); the rest
# wait their turn, well inside the suite's per-scenario timeout.
slots="${PERCH_CONFORMANCE_SLOTS:-4}"
exec 9>/dev/null
for ((i = 0; ; i = (i + 1) % slots)); do
  exec 9>"${TMPDIR:-/tmp}/perch-conformance-slot-$i.lock"
  flock -n 9 && break
  ((i + 1 == slots)) && sleep 0.2
done
perch() { echo "+ perch $*" >&2; "$perch" "$@"; }
# Runs every `TOOL<TAB>ARGUMENTS` line on stdin as `perch mcp call`; fails if any call failed.
call_each() {
  local name arguments failed=0
  while IFS=$'\t' read -r name arguments; do
    perch mcp call conf "$name" "$arguments" </dev/null || failed=1
  done
  return "$failed"
}

case "$scenario" in
  auth/*)
    # As a person would: use the server, sign in when it asks (through the browser in
    # $BROWSER, here a helper that follows the authorization page, which the suite's
    # authorization server approves at once, to Perch's loopback redirect), and go on; a call
    # refused for want of scope signs in again for the union (`--sign-in`, at most 3 times).
    # The suite's client ID metadata document stands in for Perch's (auth/basic-cimd).
    # A server that moves to another authorization server meanwhile gets a new sign-in there.
    export BROWSER="$here/browser.sh" PERCH_CLIENT_METADATA_URL="https://conformance-test.local/client-metadata.json"
    perch mcp call conf test-tool '{}' --sign-in
    ;;
  initialize | request-metadata | json-schema-ref-no-deref)
    # Connect and list: what these scenarios judge is the handshake, the requests' metadata,
    # and that a network `$ref` in a tool's schema is never fetched.
    perch mcp tools conf
    ;;
  tools_call)
    perch mcp call conf add_numbers '{"a":2,"b":3}'
    ;;
  sse-retry)
    # The server closes the call's event stream at once; the result comes on the stream
    # Perch opens again (after the `retry` delay, with Last-Event-ID).
    perch mcp call conf test_reconnection '{}'
    ;;
  elicitation-sep1034-client-defaults)
    # The server asks (elicitation) during the call; accepting with no fields of our own
    # sends the schema's defaults.
    perch mcp call conf test_client_elicitation_defaults '{}' --answers '{}'
    ;;
  sep-2322-client-request-state)
    # input_required results: answered from --answers, then the call is sent again.
    perch mcp call conf test_mrtr_echo_state '{}' --answers '{"confirmed":true}'
    perch mcp call conf test_mrtr_unrelated '{}'
    perch mcp call conf test_mrtr_no_state '{}' --answers '{"confirmed":true}'
    perch mcp call conf test_mrtr_no_result_type '{}'
    ;;
  http-standard-headers)
    # One request of each kind that names something (a tool, a resource, a prompt).
    perch mcp call conf test_headers '{}'
    perch mcp call conf my-hyphenated-tool '{}'
    perch mcp list --json >"$data/servers.json"
    perch mcp read conf "$(json first resource <"$data/servers.json")"
    perch mcp prompt conf "$(json first prompt <"$data/servers.json")"
    ;;
  http-custom-headers)
    json context-calls | call_each
    ;;
  http-invalid-tool-headers)
    # Every tool Perch offers is called: the ones with invalid x-mcp-header annotations must
    # not be among them.
    perch mcp tools conf --json >"$data/tools.json"
    json listed-calls <"$data/tools.json" | call_each
    ;;
  json-schema-2020-12-preservation)
    # The focal tool's schema, as Perch holds it, goes back to the server unchanged.
    perch mcp tools conf --json >"$data/tools.json"
    schema="$(json schema-of json_schema_2020_12_tool <"$data/tools.json")"
    perch mcp call conf json_schema_echo "{\"schema\":$schema}"
    ;;
  *)
    echo "conformance: client.sh has no steps for scenario $scenario" >&2
    exit 1
    ;;
esac
