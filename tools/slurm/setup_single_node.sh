#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, to run and test `hydra/launcher=submitit_slurm` for real.
#
# Run as root on Debian 12 (bookworm: SLURM 22.05); idempotent (run it again to check or restart the cluster):
#
#     sudo tools/slurm/setup_single_node.sh          # install, configure, start; ends with "SLURM ready: ..."
#     sudo tools/slurm/setup_single_node.sh --stop   # stop slurmd, slurmctld and munged (the cluster's jobs end)
#
# It installs slurm-wlm and munge from Debian, makes a munge key when there is none, starts munged, writes
# /etc/slurm/slurm.conf for ONE node (this host's `hostname -s`, with the CPUs and memory `slurmd -C` reports),
# starts slurmctld and slurmd, and waits until `sinfo` shows the node idle. Without systemd (a container) the
# daemons are started directly; a running daemon is left alone unless slurm.conf changed (then it is restarted).
#
# What the cluster has, and has not:
# * no accounting (AccountingStorageType=accounting_storage/none): `sacct` does not work, as on a cluster without
#   slurmdbd. The launcher (src/running/slurm.py) then learns that a task ended from `squeue`: its final state while
#   slurmctld keeps it (MinJobAge, 300 s here), after that only that it has left the queue;
# * no cgroups (proctrack/linuxproc, task/none): nothing here needs cgroup mounts or systemd. A task's memory
#   request (--mem) is enforced by the accounting gatherer instead (jobacct_gather/linux, OverMemoryKill: a task
#   whose processes use more than it asked for is killed at the next sample, every 5 s), and its cores are
#   counted by the scheduler (select/cons_tres, CR_Core_Memory) but not pinned;
# * one partition, `debug`, the default, with no time limit of its own (each task's --time applies).
#
# Environment: SLURM_PARTITION (default debug), SLURM_READY_TIMEOUT (seconds to wait for the node, default 60).
set -euo pipefail

PARTITION="${SLURM_PARTITION:-debug}"
READY_TIMEOUT="${SLURM_READY_TIMEOUT:-60}"
CONF=/etc/slurm/slurm.conf
RUN_DIR=/run/slurm
LOG_DIR=/var/log/slurm
STATE_DIR=/var/lib/slurm

say() { echo "setup_single_node: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs packages and starts munged, slurmctld and slurmd)"
case "${1:-}" in
    "") ;;
    --stop) STOP=1 ;;
    *) die "unknown argument '$1' (none, or --stop)" ;;
esac

stop_daemon() {  # the daemon whose pid file is $2, if it runs: SIGTERM, then wait up to 10 s
    local name="$1" pidfile="$2" pid
    [ -s "$pidfile" ] || return 0
    pid="$(cat "$pidfile")"
    if kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
        say "stopping $name (pid $pid)"
        kill "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
}
if [ "${STOP:-0}" -eq 1 ]; then
    stop_daemon slurmd "$RUN_DIR/slurmd.pid"
    stop_daemon slurmctld "$RUN_DIR/slurmctld.pid"
    stop_daemon munged /run/munge/munged.pid
    echo "SLURM stopped (start it again with $0)"
    exit 0
fi

# --- packages ----------------------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
        || ! command -v sinfo >/dev/null; then
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q && apt-get install -y -q slurm-wlm munge
fi
getent passwd munge >/dev/null || die "the munge package did not create the user munge"
getent passwd slurm >/dev/null || die "the slurm packages did not create the user slurm"

# --- munge -------------------------------------------------------------------------------------------------
install -d -o munge -g munge -m 0700 /etc/munge
install -d -o munge -g munge -m 0711 /var/lib/munge
install -d -o munge -g munge -m 0700 /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    say "creating the munge key /etc/munge/munge.key"
    if command -v mungekey >/dev/null; then
        mungekey --create --keyfile=/etc/munge/munge.key --force
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 20); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.5; done
munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munged does not answer (see /var/log/munge/munged.log)"

# --- slurm.conf --------------------------------------------------------------------------------------------
HOST="$(hostname -s)"
# slurmd -C: "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105"
NODE_LINE="$(slurmd -C | head -n 1)"
case "$NODE_LINE" in
    "NodeName=$HOST "*) ;;
    *) die "slurmd -C describes '${NODE_LINE%% *}', not this host ($HOST)" ;;
esac
install -d -o slurm -g slurm -m 0755 "$RUN_DIR" "$LOG_DIR" "$STATE_DIR" "$STATE_DIR/slurmctld"
install -d -o root -g root -m 0755 "$STATE_DIR/slurmd" /etc/slurm

NEW_CONF="$(mktemp)"
trap 'rm -f "$NEW_CONF"' EXIT
cat >"$NEW_CONF" <<EOF
# Written by tools/slurm/setup_single_node.sh: a one-node cluster on $HOST, no accounting, no cgroups.
ClusterName=single
SlurmctldHost=$HOST
SlurmUser=slurm
AuthType=auth/munge
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmctldPidFile=$RUN_DIR/slurmctld.pid
SlurmdPidFile=$RUN_DIR/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
StateSaveLocation=$STATE_DIR/slurmctld
SlurmdSpoolDir=$STATE_DIR/slurmd
# no cgroups in a container: processes are tracked through their parents, tasks are not pinned to cores
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# the scheduler counts cores and memory: a task asks for --cpus-per-task and --mem and waits until they are free
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# memory requests enforced without cgroups: every 5 s, a task above its --mem is killed (state OUT_OF_MEMORY)
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=5
JobAcctGatherParams=OverMemoryKill
# no accounting: sacct does not work; finished jobs stay visible to squeue and scontrol for MinJobAge seconds
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=300
# a cancelled task gets SIGTERM, then SIGKILL after KillWait seconds
KillWait=10
$NODE_LINE State=UNKNOWN
PartitionName=$PARTITION Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

CHANGED=0
if ! cmp -s "$NEW_CONF" "$CONF"; then
    say "writing $CONF"
    install -o root -g root -m 0644 "$NEW_CONF" "$CONF"
    CHANGED=1
fi

# --- daemons -----------------------------------------------------------------------------------------------
if [ "$CHANGED" -eq 1 ]; then  # restarted to read the new slurm.conf
    stop_daemon slurmd "$RUN_DIR/slurmd.pid"
    stop_daemon slurmctld "$RUN_DIR/slurmctld.pid"
fi
if ! pgrep -x slurmctld >/dev/null; then
    say "starting slurmctld (log: $LOG_DIR/slurmctld.log)"
    slurmctld
fi
for _ in $(seq 30); do scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.5; done
scontrol ping 2>/dev/null | grep -q "is UP" || die "slurmctld does not answer (see $LOG_DIR/slurmctld.log)"
if ! pgrep -x slurmd >/dev/null; then
    say "starting slurmd (log: $LOG_DIR/slurmd.log)"
    slurmd
fi

# --- wait for the node -------------------------------------------------------------------------------------
STATE=""
for _ in $(seq "$((READY_TIMEOUT * 2))"); do
    STATE="$(sinfo -h -n "$HOST" -o %T 2>/dev/null | head -n 1)"
    case "$STATE" in
        idle|mixed|allocated) break ;;
        down*|drain*|drained*)  # e.g. left down by an earlier slurmd: bring it back
            scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
done
case "$STATE" in
    idle|mixed|allocated) ;;
    *) die "node $HOST is '${STATE:-unknown}' after ${READY_TIMEOUT}s, not idle (see $LOG_DIR/slurmd.log)" ;;
esac
CPUS="$(sinfo -h -n "$HOST" -o %c)"
MEM="$(sinfo -h -n "$HOST" -o %m)"
echo "SLURM ready: node $HOST $STATE (${CPUS} CPUs, ${MEM} MB), partition $PARTITION; no accounting (no sacct)"
