#!/usr/bin/env bash
# Runs one `swift test` invocation (its arguments follow the log name), keeping its whole output in
# .build/test-logs/NAME.log as well as printing it. When it fails, the lines that say why are printed
# again at the very end: CI often keeps only the tail, and a crash's own message and crashed thread
# come before the backtraces of every other thread (and before the secondary failures of threads the
# backtracer woke, such as an interrupted read), so the tail alone named the wrong failure.
set -uo pipefail
name="$1"
shift
mkdir -p .build/test-logs
log=".build/test-logs/$name.log"
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  # Kept short and last: CI shows only the last twenty-odd lines.
  echo
  echo "=== $name failed (exit $status); the whole output is in $log ==="
  grep -a -n -m 6 -E '✘ (Test|Suite) .*(failed|recorded)|error: .*(XCTAssert|failed)|Fatal error:|Program crashed' "$log"
  crash=$(grep -a -n -m 1 -E 'Thread [0-9]+ crashed:' "$log" | cut -d: -f1)
  if [ -n "$crash" ]; then sed -n "${crash},$((crash + 12))p" "$log" | cut -c1-220; fi
fi
exit "$status"
