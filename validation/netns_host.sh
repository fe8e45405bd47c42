#!/usr/bin/env bash
# Real-kernel runs for the host-model validation (issue 13): one or two iperf3 flows
# through a tbf + pfifo bottleneck in network namespaces, with an optional constant delay
# on the ACK path (a userspace delay line, validation/delayline.c: this kernel has no
# netem) and optional packet captures on the sender's and the receiver's veth for the
# mechanism measurements (validation/host_mechanism.py).
#
#   sudo validation/netns_host.sh [options] CCA1[,CCA2]
#     -l N       pfifo limit in packets under tbf                       (default 100)
#     -r RATE    tbf rate (tc syntax)                                    (default 100mbit)
#     -b BYTES   tbf burst in bytes                                      (default 3028 = 2 frames)
#     -D MS      constant delay on the ACK path (receiver -> sender), ms (default 0 = none)
#     -s SEGS    gso_max_segs on the sender's veth (0 = kernel default)  (default 0)
#     -G MODE    receive offload on every veth: 1500 = GRO on with gro_max_size 1500
#                (keeps order, merges nothing), off, on (GRO merging)    (default 1500)
#     -d SECS    flow duration                                           (default 20)
#     -w SECS    warm-up excluded from the statistics                    (default 5)
#     -c SECS    capture SECS seconds of headers on snd:s0 and rcv:c0 from the end of the
#                warm-up (pcaps next to the JSON, FILE-less-.json.{snd,rcv}.pcap) (default 0)
#     -S SECS    start the second flow SECS after the first (e.g. 0.5)       (default 0)
#     -T MS      sample `ss -tin` in the sender's namespace every MS ms into
#                FILE-less-.json.ss.txt (0 = none)                        (default 0)
#     -K         trace the flows' ACKs and congestion states (tracepoints tcp:tcp_probe and
#                tcp:tcp_cong_state_set, tracefs) into FILE-less-.json.trace, for
#                validation/host_kernel_trace.py and host_ack_gaps.py (machine-wide
#                tracing: one such run at a time)
#     -o FILE    JSON summary (default stdout); iperf3 JSON next to it
# Always written next to the JSON: the TCP counters of the sender's and the receiver's
# namespace at the end (`nstat -az`: .nstat.snd.txt/.nstat.rcv.txt) and the machine's
# /proc/net/softnet_stat before and after (.softnet.txt; backlog drops are column 2).
#
# Topology: <P>snd --veth-- <P>rtr --veth-- <P>rcv (P = $NS_PREFIX, default "h13-").
# Data: snd:s0 -> rtr:r0 -> rtr:r1 (tbf RATE + pfifo N) -> rcv:c0.
# ACKs: rcv:c0 -> rtr:r1 -> [rtr:dl0, the delay line, if -D] -> rtr:r0 -> snd:s0.
# TSO/GSO off on every veth (Linux TCP still builds GSO skbs, segmented at the device;
# -s 1 makes it send single segments). Flows start together; CCA per flow via iperf3 -C.
# Everything created is removed on exit; every long-running command runs under timeout.
set -euo pipefail

LIMIT=100 RATE=100mbit BURST=3028 ACKDELAY=0 GSOSEGS=0 GRO=1500 DUR=20 WARM=5 CAP=0 OUT="" STAGGER=0 SSMS=0 KTRACE=0
while getopts "l:r:b:D:s:G:d:w:c:S:T:Ko:h" opt; do
  case $opt in
    l) LIMIT=$OPTARG ;; r) RATE=$OPTARG ;; b) BURST=$OPTARG ;; D) ACKDELAY=$OPTARG ;;
    s) GSOSEGS=$OPTARG ;; G) GRO=$OPTARG ;; d) DUR=$OPTARG ;; w) WARM=$OPTARG ;;
    c) CAP=$OPTARG ;; o) OUT=$OPTARG ;; S) STAGGER=$OPTARG ;; T) SSMS=$OPTARG ;; K) KTRACE=1 ;;
    h) sed -n '2,39p' "$0"; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
CCAS=${1:-}
[ -n "$CCAS" ] || { echo "usage: $0 [options] CCA1[,CCA2]   (-h for help)" >&2; exit 2; }
IFS=, read -r -a CC <<<"$CCAS"
[ "${#CC[@]}" -le 2 ] || { echo "at most two flows" >&2; exit 2; }
for c in "${CC[@]}"; do
  grep -qw "$c" /proc/sys/net/ipv4/tcp_available_congestion_control || { echo "kernel has no $c" >&2; exit 1; }
done
case $GRO in 1500|off|on) ;; *) echo "-G must be 1500, off or on" >&2; exit 2 ;; esac
case $SSMS in ''|*[!0-9]*) echo "-T must be a whole number of milliseconds" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "must run as root" >&2; exit 1; }
for c in ip tc iperf3 ethtool ping python3 timeout tcpdump cc; do
  command -v $c >/dev/null || { echo "missing $c" >&2; exit 1; }
done

HERE=$(cd "$(dirname "$0")" && pwd)
P=${NS_PREFIX:-h13-}
SND=${P}snd RTR=${P}rtr RCV=${P}rcv
WORK=$(mktemp -d /tmp/netns_host.XXXXXX)
if [ -n "$OUT" ]; then RAW=${OUT%.json}; mkdir -p "$(dirname "$OUT")"; else RAW=$WORK/run; fi
PIDS=()
TR=/sys/kernel/tracing
trace_off() {
  echo 0 >"$TR/tracing_on"
  for e in tcp_probe tcp_cong_state_set; do echo 0 >"$TR/events/tcp/$e/enable"; echo 0 >"$TR/events/tcp/$e/filter"; done
}
cleanup() {
  set +e
  if [ "$KTRACE" = 1 ]; then trace_off 2>/dev/null; fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for n in $SND $RTR $RCV; do ip netns del "$n" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for n in $SND $RTR $RCV; do
  if ip netns list | grep -qw "$n"; then echo "namespace $n exists (another run?)" >&2; trap - EXIT; exit 1; fi
done
if [ "$ACKDELAY" != 0 ]; then cc -O2 -o "$WORK/delayline" "$HERE/delayline.c"; fi

for n in $SND $RTR $RCV; do ip netns add "$n"; done
X() { local n=$1; shift; ip netns exec "$n" "$@"; }
ip link add s0 netns $SND type veth peer name r0 netns $RTR
ip link add r1 netns $RTR type veth peer name c0 netns $RCV
X $SND ip addr add 10.200.1.1/24 dev s0
X $RTR ip addr add 10.200.1.2/24 dev r0
X $RTR ip addr add 10.200.2.1/24 dev r1
X $RCV ip addr add 10.200.2.2/24 dev c0
for pair in "$SND s0" "$RTR r0" "$RTR r1" "$RCV c0"; do
  set -- $pair
  X "$1" ip link set dev "$2" up
  case $GRO in
    off) X "$1" ethtool -K "$2" tso off gso off gro off >/dev/null ;;
    on) X "$1" ethtool -K "$2" tso off gso off gro on >/dev/null ;;
    1500) X "$1" ethtool -K "$2" tso off gso off gro on >/dev/null
          X "$1" ip link set dev "$2" gro_max_size 1500 ;;
  esac
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

# ACK-path delay: packets entering rtr on r1 (from the receiver) are routed into the TUN
# device dl0; the delay line writes them back into dl0 DELAY later, and from there the
# main table forwards them to the sender. rp_filter off: they re-enter on dl0.
if [ "$ACKDELAY" != 0 ]; then
  # SCHED_FIFO: the 2 shared cores are busy; a normal-priority delay line wakes late
  ip netns exec $RTR timeout $((DUR + 60)) chrt -f 50 "$WORK/delayline" dl0 $((ACKDELAY * 1000)) 2>"$RAW.delayline.txt" & DLPID=$!; PIDS+=($DLPID)
  for i in $(seq 50); do X $RTR ip link show dl0 >/dev/null 2>&1 && break; sleep 0.1; done
  X $RTR ip link set dev dl0 up txqueuelen 10000
  for k in all default dl0 r0 r1; do X $RTR sysctl -qw net.ipv4.conf.$k.rp_filter=0; done
  X $RTR ip rule add iif r1 table 100 priority 100
  X $RTR ip route add default dev dl0 table 100
fi

X $RTR tc qdisc replace dev r1 root handle 1: tbf rate "$RATE" burst "$BURST" limit 100000000
X $RTR tc qdisc add dev r1 parent 1:1 handle 10: pfifo limit "$LIMIT"

PING=$(X $SND ping -q -c 30 -i 0.02 10.200.2.2 | awk -F'[/ =]+' '/^rtt/{print $6, $7, $8}')
read -r RTT_MIN RTT_AVG RTT_MAX <<<"$PING"

for i in "${!CC[@]}"; do
  ip netns exec $RCV timeout $((DUR + 40)) iperf3 -s -1 -p $((5201 + i)) -J >"$RAW.srv$((i + 1)).json" 2>/dev/null & PIDS+=($!)
done
sleep 1
if [ "$CAP" != 0 ]; then
  ( sleep "$WARM"
    ip netns exec $SND timeout "$CAP" tcpdump -i s0 -s 96 -B 16384 --time-stamp-precision=nano -w "$RAW.snd.pcap" tcp 2>/dev/null &
    ip netns exec $RCV timeout "$CAP" tcpdump -i c0 -s 96 -B 16384 --time-stamp-precision=nano -w "$RAW.rcv.pcap" tcp 2>/dev/null &
    wait ) & PIDS+=($!)
fi
cp /proc/net/softnet_stat "$RAW.softnet.txt"
if [ "$KTRACE" = 1 ]; then
  [ -e "$TR/trace" ] || mount -t tracefs nodev "$TR"
  echo 0 >"$TR/tracing_on"; echo >"$TR/trace"
  echo 32768 >"$TR/buffer_size_kb"
  for e in tcp_probe tcp_cong_state_set; do
    echo 'dport == 5201 || dport == 5202' >"$TR/events/tcp/$e/filter"; echo 1 >"$TR/events/tcp/$e/enable"
  done
  echo 1 >"$TR/tracing_on"
fi
if [ "$SSMS" != 0 ]; then
  # one `ss -tin` snapshot every SSMS ms, each preceded by a "# <epoch seconds>" line
  ( end=$(( $(date +%s) + DUR + 2 ))
    while [ "$(date +%s)" -lt "$end" ]; do
      echo "# $(date +%s.%N)"; X $SND ss -tin dst 10.200.2.2; sleep "$(awk "BEGIN{print $SSMS/1000}")"
    done >"$RAW.ss.txt" ) & PIDS+=($!)
fi
T0=$(date +%s.%N)
CPIDS=()
for i in "${!CC[@]}"; do
  if [ "$i" = 1 ] && [ "$STAGGER" != 0 ]; then sleep "$STAGGER"; fi
  ip netns exec $SND timeout $((DUR + 30)) iperf3 -c 10.200.2.2 -p $((5201 + i)) -C "${CC[$i]}" -t "$DUR" -J >"$RAW.cli$((i + 1)).json" & CPIDS+=($!)
done
PIDS+=("${CPIDS[@]}")
wait "${CPIDS[@]}" || true
sleep 1
if [ "$ACKDELAY" != 0 ]; then kill "$DLPID" 2>/dev/null; wait "$DLPID" 2>/dev/null || true; fi
QSTATS=$(X $RTR tc -s qdisc show dev r1)
if [ "$KTRACE" = 1 ]; then trace_off; cp "$TR/trace" "$RAW.trace"; echo 1408 >"$TR/buffer_size_kb"; fi  # the default size
X $SND nstat -saz >"$RAW.nstat.snd.txt" 2>/dev/null || true
X $RCV nstat -saz >"$RAW.nstat.rcv.txt" 2>/dev/null || true
{ echo "# after"; cat /proc/net/softnet_stat; } >>"$RAW.softnet.txt"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

DLINE=$(tail -n1 "$RAW.delayline.txt" 2>/dev/null | grep -o 'mean_late_us.*' || true)
export STAGGER CCAS LIMIT RATE BURST ACKDELAY GSOSEGS GRO DUR WARM RTT_MIN RTT_AVG RTT_MAX QSTATS LOAD RAW DLINE
python3 - >"$WORK/summary.json" <<'PY'
import json, os, re, statistics as st
E = os.environ
raw, warm, dur = E["RAW"], float(E["WARM"]), float(E["DUR"])
def load(p):
    try: return json.load(open(p))
    except Exception: return None
flows = []
for i, cca in enumerate(E["CCAS"].split(",")):
    c, s = load(f"{raw}.cli{i + 1}.json"), load(f"{raw}.srv{i + 1}.json")
    f = {"flow": i + 1, "cca": cca}
    if c is None or "end" not in c:
        f["error"] = "no iperf3 client result"; flows.append(f); continue
    # goodput: bytes the server received in [warm, dur]
    iv = [x["sum"] for x in (s or c)["intervals"]]
    win = [x for x in iv if x["start"] >= warm - 1e-6 and x["end"] <= dur + 0.5]
    b, secs = sum(x["bytes"] for x in win), sum(x["seconds"] for x in win)
    f["goodput_mbps"] = 8 * b / secs / 1e6 if secs else None
    cs = [x["streams"][0] for x in c["intervals"] if x["streams"][0]["start"] >= warm - 1e-6]
    f["retrans_in_window"] = sum(x.get("retransmits", 0) for x in cs)
    f["retrans_total"] = c["end"]["streams"][0]["sender"].get("retransmits")
    rtts = [x["rtt"] for x in cs if x.get("rtt")]
    f["srtt_us_mean"] = st.mean(rtts) if rtts else None
    flows.append(f)
def nstat(path, keep=("TcpRetransSegs", "TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery",
                      "TcpExtTCPSackRecovery", "TcpExtTCPSackRecoveryFail", "TcpExtTCPLostRetransmit",
                      "TcpExtTCPSpuriousRTOs", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo", "TcpExtTCPSlowStartRetrans",
                      "TcpExtTCPHystartTrainDetect", "TcpExtTCPHystartDelayDetect", "TcpExtDelayedACKs")):
    # the namespace's TCP counters at the end (both flows and iperf3's control connections)
    try:
        rows = [line.split() for line in open(path)]
    except OSError:
        return None
    return {r[0].removeprefix("TcpExt"): int(r[1]) for r in rows if len(r) >= 2 and r[0] in keep}
g = [f.get("goodput_mbps") or 0 for f in flows]
tot = sum(g)
m = re.search(r"qdisc pfifo 10:.*?Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", E["QSTATS"], re.S)
rate_mbps = float(re.match(r"([\d.]+)", E["RATE"]).group(1)) * {"k": 1e-3, "m": 1, "g": 1e3}[E["RATE"].lower().rstrip("bit")[-1]]
print(json.dumps({
    "source": "linux", "kernel": os.uname().release, "ccas": E["CCAS"],
    "rate_mbps": rate_mbps, "pfifo_limit_pkts": int(E["LIMIT"]), "ack_delay_ms": float(E["ACKDELAY"]),
    "sender_gso_max_segs": int(E["GSOSEGS"]), "gro": E["GRO"], "stagger_s": float(E["STAGGER"]), "duration_s": dur, "warmup_s": warm,
    "ping_rtt_ms": {"min": float(E["RTT_MIN"]), "avg": float(E["RTT_AVG"]), "max": float(E["RTT_MAX"])},
    "flows": flows, "total_goodput_mbps": tot,
    "shares": [x / tot for x in g] if tot else None,
    "jain": tot * tot / (len(g) * sum(x * x for x in g)) if tot else None,
    "utilization": tot / rate_mbps,
    "bottleneck": {"sent_pkts": int(m.group(2)), "dropped": int(m.group(3))} if m else None,
    "loadavg_after": E["LOAD"], "delay_line_lateness": E["DLINE"] or None,
    "sender_nstat": nstat(f"{raw}.nstat.snd.txt"),
}, indent=1))
PY
if [ -n "$OUT" ]; then cp "$WORK/summary.json" "$OUT"; echo "wrote $OUT" >&2; else cat "$WORK/summary.json"; fi
