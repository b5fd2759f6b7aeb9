#!/bin/sh
# The CPU evidence runs one after the other, one thread each (docs/evidence.md). Resumable: rerun to continue.
set -u
for id in "$@"; do
  echo "== $(date -u +%FT%TZ) start $id"
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m attention_claims.cli replicate "$id" || echo "== $id failed: $?"
  echo "== $(date -u +%FT%TZ) end $id"
done
