#!/bin/bash
# Example Slurm array job: spread one streamtrace sweep over N machines, then merge.
#
#   sbatch --array=1-16 scripts/slurm-sweep.sh            # 16 shards
#   sbatch --dependency=afterok:<jobid> --wrap \
#     'streamtrace merge results/shard-*.csv -o results/all.csv --json results/all.json \
#        --tables results/tables --plot results/plots'
#
# Every shard runs the same command with --shard k/N. Jobs (program x configuration) are
# dealt round-robin, so each shard simulates only the programs it has jobs for and writes its
# own capture directory (captures are per node: node-local scratch is fastest; a shared
# directory works too, because a capture is written to a temporary name and renamed).
# Rows of the shards are disjoint; `merge` refuses duplicates and writes the same files a
# single unsharded sweep would (byte-identical CSV).
#
#SBATCH --job-name=streamtrace-sweep
#SBATCH --cpus-per-task=8
#SBATCH --mem=8G
#SBATCH --time=01:00:00
#SBATCH --output=results/slurm-%A_%a.log

set -euo pipefail
: "${SLURM_ARRAY_TASK_ID:?run this with sbatch --array=1-N}"
: "${SLURM_ARRAY_TASK_COUNT:?run this with sbatch --array=1-N}"
STREAMTRACE=${STREAMTRACE:-streamtrace}
CONFIGS=${CONFIGS:-paper}
PROGRAMS=${PROGRAMS:-testbenches/programs}
SCRATCH=${TMPDIR:-/tmp}/streamtrace-captures-$USER

mkdir -p results
"$STREAMTRACE" sweep \
  --programs "$PROGRAMS" \
  --configs "$CONFIGS" \
  --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" \
  --capture-dir "$SCRATCH" \
  -j "${SLURM_CPUS_PER_TASK:-1}" \
  -o "results/shard-${SLURM_ARRAY_TASK_ID}.csv" \
  --quiet
