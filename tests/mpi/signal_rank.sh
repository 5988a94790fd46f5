#!/bin/sh
# signal_rank.sh RANK SIGNAL SECONDS COMMAND... - run COMMAND as one rank of
# an MPI job; rank RANK sends itself SIGNAL after SECONDS (test_mpi.cpp:
# a rank that dies or is interrupted while the others run).
rank="$1" sig="$2" delay="$3"
shift 3
if [ "${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}" = "$rank" ]; then
    (sleep "$delay" && kill -"$sig" $$) >/dev/null 2>&1 &
fi
exec "$@"
