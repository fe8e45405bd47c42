#!/usr/bin/env bash
# Real-kernel BBRv1 (and CUBIC) through a tbf + pfifo bottleneck in network namespaces,
# for the side-by-side validation in docs/validation.md.
#
#   sudo validation/netns_bbr.sh [options] SCENARIO
#     SCENARIO   v1 = 1 BBR flow + 1 CUBIC flow;  v2 = 1 lone BBR flow
#     -l N       pfifo limit in packets under tbf           (default 100)
#     -r RATE    tbf rate (tc syntax)                        (default 100mbit)
#     -b BYTES   tbf burst in bytes                          (default 3028 = 2 x 1514 B frames)
#     -d SECS    flow duration                               (default 60)
#     -w SECS    warm-up excluded from goodput/queue stats   (default 10)
#     -s SEGS    gso_max_segs on the sender's veth: 1 = one MSS per skb, as ccbench
#                (0 = leave the kernel default, 64 KB TSO-autosized skbs)      (default 1)
#     -o FILE    JSON summary (default stdout); raw data go to FILE's directory as
#                FILE-less-.json.{qlen.tsv,iperf-*.json,ss.txt}
#
#   sudo validation/netns_bbr.sh --cleanup
#                remove what a killed run left (its namespaces and temp directories)
#
# Option values are checked as numbers (or a tc rate) before anything uses them: they
# are never evaluated by the shell. One run at a time per NS_PREFIX (a lock in
# /run/lock); the temp directory is created only after every check has passed.
#
# Topology: <P>snd --veth-- <P>rtr --veth-- <P>rcv  (P = $NS_PREFIX, default "ccbv-").
# The bottleneck is rtr's egress toward rcv: tbf rate RATE burst B with a child
# pfifo limit N. No netem: the base RTT is the natural veth RTT (measured with ping
# and reported). TSO/GSO/GRO off on every veth. The CCA is chosen per flow with
# `iperf3 -C`; two one-shot iperf3 servers listen in rcv (ports 5201, 5202).
# The qdisc backlog is sampled every 100 ms (`tc -s qdisc show`), retransmissions
# come from iperf3 -J (client side), goodput from the servers' -J (received bytes).
# Everything this script creates is removed on exit (trap); every long-running
# command runs under `timeout`, so a run is bounded by about duration + 40 s.
set -euo pipefail

LIMIT=100 RATE=100mbit BURST=3028 DUR=60 WARM=10 GSOSEGS=1 OUT=""
P=${NS_PREFIX:-ccbv-}
die() { echo "$0: $*" >&2; exit 2; }
[[ $P =~ ^[a-z][a-z0-9-]{0,7}$ ]] || die "NS_PREFIX '${P:0:40}' must be 1-8 lower-case letters, digits or '-'"
SND=${P}snd RTR=${P}rtr RCV=${P}rcv
LOCK=/run/lock/ccbench-netns-${P}.lock

remove_namespaces() {
  local n
  for n in $SND $RTR $RCV; do
    { ip netns pids "$n" 2>/dev/null | xargs -r kill -9; ip netns del "$n"; } 2>/dev/null || true
  done
}

if [ "${1:-}" = "--cleanup" ]; then
  [ "$(id -u)" = 0 ] || die "--cleanup must run as root"
  exec 9>"$LOCK"
  flock -n 9 || die "a run holding $LOCK is alive; it cleans up after itself"
  remove_namespaces
  rm -rf /tmp/netns_bbr."$P"??????
  echo "removed namespaces $SND $RTR $RCV (if present) and stale /tmp/netns_bbr.$P* directories" >&2
  exit 0
fi

while getopts "l:r:b:d:w:s:o:h" opt; do
  case $opt in
    l) LIMIT=$OPTARG ;; r) RATE=$OPTARG ;; b) BURST=$OPTARG ;; d) DUR=$OPTARG ;;
    w) WARM=$OPTARG ;; s) GSOSEGS=$OPTARG ;; o) OUT=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
SCEN=${1:-}
case "$SCEN" in v1|v2) ;; *) echo "usage: $0 [options] v1|v2 | --cleanup   (-h for help)" >&2; exit 2 ;; esac
# Every value is checked as text before any arithmetic or command sees it.
uint() {  # name value min max
  [[ $2 =~ ^[0-9]{1,9}$ ]] || die "-$1 '${2:0:40}' is not a whole number"
  (( 10#$2 >= $3 && 10#$2 <= $4 )) || die "-$1 $2 is not in [$3, $4]"
}
uint l "$LIMIT" 1 1000000; uint b "$BURST" 1514 100000000; uint d "$DUR" 1 86400
uint w "$WARM" 0 86400; uint s "$GSOSEGS" 0 65535
LIMIT=$((10#$LIMIT)) BURST=$((10#$BURST)) DUR=$((10#$DUR)) WARM=$((10#$WARM)) GSOSEGS=$((10#$GSOSEGS))
(( WARM < DUR )) || die "-w $WARM must be below -d $DUR"
[[ $RATE =~ ^[0-9]{1,6}(\.[0-9]{1,6})?([kKmMgG]?bit|[kKmMgG]?bps)$ ]] || die "-r '${RATE:0:40}' is not a tc rate such as 100mbit"
[[ -z $OUT || $OUT != -* ]] || die "-o '${OUT:0:40}' must be a file name"
[ "$(id -u)" = 0 ] || { echo "must run as root" >&2; exit 1; }
for c in ip tc iperf3 ethtool ping python3 timeout; do
  command -v $c >/dev/null || { echo "missing $c (apt-get install -y iperf3 ethtool iputils-ping)" >&2; exit 1; }
done
grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control ||
  modprobe tcp_bbr 2>/dev/null || { echo "kernel has no bbr" >&2; exit 1; }

exec 9>"$LOCK"
flock -n 9 || die "another run with NS_PREFIX=$P holds $LOCK; wait for it, or set NS_PREFIX"
for n in $SND $RTR $RCV; do
  if ip netns list | grep -qw "$n"; then
    die "namespace $n exists: a killed run left it; remove it with: sudo $0 --cleanup"
  fi
done
WORK=$(mktemp -d "/tmp/netns_bbr.${P}XXXXXX")
if [ -n "$OUT" ]; then RAW=${OUT%.json}; mkdir -p "$(dirname "$OUT")"; else RAW=$WORK/run; fi
PIDS=()

cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done   # timeout passes TERM on
  sleep 0.5
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  remove_namespaces
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for n in $SND $RTR $RCV; do ip netns add "$n"; done
X() { local n=$1; shift; ip netns exec "$n" "$@"; }
# (background jobs below call `ip netns exec` directly, not X, so that $! is the
#  process itself -- ip execs into timeout -- and cleanup's kill reaches it)

# snd:s0 10.200.1.1 <-> rtr:r0 10.200.1.2 ; rtr:r1 10.200.2.1 <-> rcv:c0 10.200.2.2
ip link add s0 netns $SND type veth peer name r0 netns $RTR
ip link add r1 netns $RTR type veth peer name c0 netns $RCV
X $SND ip addr add 10.200.1.1/24 dev s0
X $RTR ip addr add 10.200.1.2/24 dev r0
X $RTR ip addr add 10.200.2.1/24 dev r1
X $RCV ip addr add 10.200.2.2/24 dev c0
for pair in "$SND s0" "$RTR r0" "$RTR r1" "$RCV c0"; do
  set -- $pair
  X "$1" ip link set dev "$2" up
  X "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || X "$1" ethtool -K "$2" tso off gso off gro off
done
for n in $SND $RTR $RCV; do X "$n" ip link set dev lo up; done
X $SND ip route add default via 10.200.1.2
X $RCV ip route add default via 10.200.2.1
X $RTR sysctl -qw net.ipv4.ip_forward=1
# iperf3 (3.12) sets TCP_CONGESTION after connect(), so every flow is first set up with
# the namespace's default CCA. If that is bbr (as on this machine), bbr_init marks the
# socket SK_PACING_NEEDED and the switch to cubic/reno keeps TCP's internal pacing on:
# "cubic" would be paced CUBIC. A default of reno never turns pacing on; bbr flows
# still get it from their own bbr_init. (A child namespace may only default to a CCA in
# tcp_allowed_congestion_control: "reno bbr" here.)
X $SND sysctl -qw net.ipv4.tcp_congestion_control=reno
if [ "$GSOSEGS" != 0 ]; then X $SND ip link set dev s0 gso_max_segs "$GSOSEGS"; fi

# the bottleneck: tbf (shaper) with a packet-limited pfifo child, on rtr -> rcv
X $RTR tc qdisc replace dev r1 root handle 1: tbf rate "$RATE" burst "$BURST" limit 100000000
X $RTR tc qdisc add dev r1 parent 1:1 handle 10: pfifo limit "$LIMIT"

# base RTT of the idle path
PING=$(X $SND ping -q -c 50 -i 0.02 10.200.2.2 | awk -F'[/ =]+' '/^rtt/{print $6, $7, $8}')
read -r RTT_MIN RTT_AVG RTT_MAX <<<"$PING"

ip netns exec $RCV timeout $((DUR + 40)) iperf3 -s -1 -p 5201 -J >"$RAW.iperf-srv1.json" 2>/dev/null & PIDS+=($!)
if [ "$SCEN" = v1 ]; then
  ip netns exec $RCV timeout $((DUR + 40)) iperf3 -s -1 -p 5202 -J >"$RAW.iperf-srv2.json" 2>/dev/null & PIDS+=($!)
fi
sleep 1

# queue sampler: pfifo child backlog every 100 ms, "unix_time bytes packets"
ip netns exec $RTR timeout $((DUR + 10)) bash -c '
  while :; do
    t=$(date +%s.%N)
    tc -s qdisc show dev r1 | awk -v t="$t" "/qdisc pfifo 10:/{f=1} f&&/backlog/{sub(\"b\",\"\",\$2); sub(\"p\",\"\",\$3); print t, \$2, \$3; exit}"
    sleep 0.1
  done' >"$RAW.qlen.tsv" & PIDS+=($!)
# ss snapshots of the sender's sockets, once a second (for the explanations)
ip netns exec $SND timeout $((DUR + 10)) bash -c 'while :; do date +%s.%N; ss -tin dst 10.200.2.2; sleep 1; done' >"$RAW.ss.txt" & PIDS+=($!)

T0=$(date +%s.%N)
ip netns exec $SND timeout $((DUR + 30)) iperf3 -c 10.200.2.2 -p 5201 -C bbr -t "$DUR" -J >"$RAW.iperf-bbr.json" & CB=$!
if [ "$SCEN" = v1 ]; then
  ip netns exec $SND timeout $((DUR + 30)) iperf3 -c 10.200.2.2 -p 5202 -C cubic -t "$DUR" -J >"$RAW.iperf-cubic.json" & CC=$!
  PIDS+=($CB $CC); wait $CB $CC || true
else
  PIDS+=($CB); wait $CB || true
fi
sleep 1
QSTATS=$(X $RTR tc -s qdisc show dev r1)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
KREL=$(uname -r)
DEFQ=$(sysctl -n net.core.default_qdisc)
SNDQ=$(X $SND tc qdisc show dev s0 | head -1)

export SCEN LIMIT RATE BURST DUR WARM GSOSEGS RTT_MIN RTT_AVG RTT_MAX T0 QSTATS LOAD KREL DEFQ SNDQ RAW
python3 - >"$WORK/summary.json" <<'PY'
import json, os, re, statistics as st
E = os.environ
raw, warm, dur, t0 = E["RAW"], float(E["WARM"]), float(E["DUR"]), float(E["T0"])
def load(p):
    try: return json.load(open(p))
    except Exception: return None
def flow(cca, cli, srv):
    c, s = load(cli), load(srv)
    out = {"cca": cca}
    if c is None or "end" not in c: out["error"] = "no iperf3 client result"; return out
    # goodput = bytes received by the server in the [warm, dur] window
    iv = [i["sum"] for i in (s or c)["intervals"]]
    win = [i for i in iv if i["start"] >= warm - 1e-6 and i["end"] <= dur + 0.5]
    b = sum(i["bytes"] for i in win); secs = sum(i["seconds"] for i in win)
    out["goodput_mbps"] = 8 * b / secs / 1e6 if secs else None
    out["goodput_source"] = "server" if s else "client"
    snd = c["end"]["streams"][0]["sender"]
    out["retransmits_total"] = snd.get("retransmits")
    out["retransmits_in_window"] = sum(i["streams"][0].get("retransmits", 0) for i in c["intervals"]
                                       if i["streams"][0]["start"] >= warm - 1e-6)
    rtts = [i["streams"][0].get("rtt") for i in c["intervals"] if i["streams"][0]["start"] >= warm - 1e-6]
    rtts = [r for r in rtts if r]
    out["srtt_us_median"] = st.median(rtts) if rtts else None
    cw = [i["streams"][0].get("snd_cwnd") for i in c["intervals"] if i["streams"][0]["start"] >= warm - 1e-6]
    cw = [x for x in cw if x]
    out["snd_cwnd_bytes_median"] = st.median(cw) if cw else None
    out["sender_bytes_total"] = snd["bytes"]
    return out
flows = [flow("bbr", raw + ".iperf-bbr.json", raw + ".iperf-srv1.json")]
if E["SCEN"] == "v1":
    flows.append(flow("cubic", raw + ".iperf-cubic.json", raw + ".iperf-srv2.json"))
def size(t):  # tc abbreviates backlog bytes: 1205K = 1205 x 1024
    mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(t[-1:], 1)
    return int(float(t.rstrip("KMG")) * mult)
q = []
for line in open(raw + ".qlen.tsv"):
    p = line.split()
    if len(p) == 3 and warm <= float(p[0]) - t0 <= dur: q.append((size(p[1]), int(p[2])))
qp = [x[1] for x in q]
m = re.search(r"qdisc pfifo 10:.*?Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)", E["QSTATS"], re.S)
tot = sum(f.get("goodput_mbps") or 0 for f in flows)
print(json.dumps({
    "source": "linux", "kernel": E["KREL"], "scenario": E["SCEN"],
    "tbf": {"rate": E["RATE"], "burst_bytes": int(E["BURST"])}, "pfifo_limit_pkts": int(E["LIMIT"]),
    "sender_gso_max_segs": int(E["GSOSEGS"]), "sender_qdisc": E["SNDQ"], "default_qdisc": E["DEFQ"],
    "duration_s": dur, "warmup_s": warm,
    "ping_rtt_ms": {"min": float(E["RTT_MIN"]), "avg": float(E["RTT_AVG"]), "max": float(E["RTT_MAX"])},
    "flows": flows, "total_goodput_mbps": tot,
    "bbr_share": (flows[0].get("goodput_mbps") or 0) / tot if tot else None,
    "queue_pkts": {"samples": len(qp), "mean": st.mean(qp) if qp else None,
                   "median": st.median(qp) if qp else None, "max": max(qp) if qp else None},
    "bottleneck": {"sent_pkts": int(m.group(2)), "dropped": int(m.group(3))} if m else None,
    "loadavg_after": E["LOAD"],
}, indent=1))
PY
if [ -n "$OUT" ]; then cp "$WORK/summary.json" "$OUT"; echo "wrote $OUT" >&2; else cat "$WORK/summary.json"; fi
