# What both desktop lanes share (sourced by sway.sh and gnome.sh after they set `lane`, their
# folder, and `lane_name`): the processes they start, ended with the lane and the folder
# removed; `lane_cleanup`, if a lane defines it, runs first.
pids=()
cleanup() {
  if declare -F lane_cleanup >/dev/null; then lane_cleanup; fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$lane"
}
trap cleanup EXIT
trap "exit 130" INT TERM

wait_for() { # seconds, description, command...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "$lane_name lane: $what did not start within ${seconds}s" >&2; return 1
}
