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
# single unsharded sweep would (byte-identical CSV rows; only the # metadata lines differ).
# scripts/slurm-selftest.sh runs this script on a one-node Slurm on localhost and checks that.
#
# Environment: STREAMTRACE (the binary), PROGRAMS, CONFIGS, MAX_INSNS (the cap, default the
# sweep's), RESULTS (output directory, default results; it must exist before sbatch, since
# Slurm writes the log there), SWEEP_ARGS (more sweep options, e.g. --allow-failures).
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
RESULTS=${RESULTS:-results}
SCRATCH=${TMPDIR:-/tmp}/streamtrace-captures-${USER:-$(id -un)}
extra=()
[ -n "${MAX_INSNS:-}" ] && extra+=(--max-insns "$MAX_INSNS")
# shellcheck disable=SC2206 # SWEEP_ARGS is a list of options, split at spaces on purpose
[ -n "${SWEEP_ARGS:-}" ] && extra+=($SWEEP_ARGS)

mkdir -p "$RESULTS"
"$STREAMTRACE" sweep \
  --programs "$PROGRAMS" \
  --configs "$CONFIGS" \
  --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" \
  --capture-dir "$SCRATCH" \
  -j "${SLURM_CPUS_PER_TASK:-1}" \
  -o "$RESULTS/shard-${SLURM_ARRAY_TASK_ID}.csv" \
  --quiet "${extra[@]}"
