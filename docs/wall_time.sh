# Sourced by the docs/run_*.sh runners: adds a run's wall-clock seconds to
# <run folder>/wall_seconds (summed over the invocations of a resumed run),
# also when the runner is stopped mid-run (Ctrl-C, kill): the trainer then
# checkpoints and exits, and the seconds it ran are not lost.
#
#   wall_time_start DIR; <train>; wall_time_stop
_wall_time_dir=""
_wall_time_start=0

wall_time_start() {
  _wall_time_dir=$1
  _wall_time_start=$SECONDS
}

wall_time_stop() {
  [ -n "$_wall_time_dir" ] || return 0
  local before
  before=$(cat "$_wall_time_dir/wall_seconds" 2>/dev/null || echo 0)
  echo $(( before + SECONDS - _wall_time_start )) > "$_wall_time_dir/wall_seconds"
  _wall_time_dir=""
}

trap 'wall_time_stop; exit 130' INT TERM
