#!/bin/sh
# signal_rank.sh RANK SIGNAL SECONDS [--after FILE] COMMAND... - run COMMAND
# as one rank of an MPI job; rank RANK sends itself SIGNAL after SECONDS
# (test_mpi.cpp: a rank that dies or is interrupted while the others run).
# A signal the process can catch (INT, TERM, USR1) is sent only once it
# catches it (its SigCgt mask in /proc), at most 20 s later, so that a slow
# start on a loaded machine does not turn the test into one of MPI's
# start-up.  With --after FILE the SECONDS count from when FILE exists (a
# first checkpoint; at most 20 s of waiting for it).
rank="$1" sig="$2" delay="$3"
shift 3
after=""
if [ "$1" = "--after" ]; then
    after="$2"
    shift 2
fi
if [ "${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}" = "$rank" ]; then
    pid=$$
    (
        tries=0
        while [ -n "$after" ] && [ ! -e "$after" ] && [ "$tries" -lt 400 ]; do
            tries=$((tries + 1))
            sleep 0.05
        done
        sleep "$delay"
        case "$sig" in INT) num=2 ;; TERM) num=15 ;; USR1) num=10 ;; *) num=0 ;; esac
        tries=0
        while [ "$num" -gt 0 ] && [ "$tries" -lt 200 ]; do
            mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
            [ -n "$mask" ] && [ $(( (0x$mask >> (num - 1)) & 1 )) -eq 1 ] && break
            tries=$((tries + 1))
            sleep 0.1
        done
        kill -"$sig" "$pid"
    ) >/dev/null 2>&1 &
fi
exec "$@"
