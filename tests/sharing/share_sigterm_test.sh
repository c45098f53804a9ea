#!/bin/sh
# SIGTERM ends vtpage-share's wait for consumers promptly (it waited out --wait-seconds before,
# ignoring the signal). Usage: share_sigterm_test.sh path/to/vtpage-share
set -u
program=$1
"$program" producer --backend host --consumers 1 --wait-seconds 60 --quiet &
pid=$!
sleep 1
start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid"
status=$?
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "vtpage-share ended $took_ms ms after SIGTERM (status $status)"
if [ "$took_ms" -gt 1000 ]; then
  echo "FAILED: it took longer than 1 s"
  exit 1
fi
exit 0
