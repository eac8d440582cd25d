#!/bin/bash
# test-restart.sh - data survives the server: written and flushed through
# one server, read back by the next one, after SIGTERM and after SIGKILL,
# switching cache modes in between (page-cache writes must be visible to
# O_DIRECT reads and the other way round).
source "$(dirname "$0")/functions.sh"
requires_libnbd

start_server --size 32M --cache=page "$disk"
nbdcheck fill "$uri" 11 || fatal "fill through --cache=page"
stop_server
start_server --cache=none "$disk"
nbdcheck verify "$uri" 11 || fatal "after SIGTERM, --cache=none reads"
nbdcheck fill "$uri" 12 || fatal "fill through --cache=none"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || :
start_server --cache=page "$disk"
nbdcheck verify "$uri" 12 || fatal "after SIGKILL, --cache=page reads"
stop_server
echo "data kept across SIGTERM and SIGKILL restarts and cache modes"
