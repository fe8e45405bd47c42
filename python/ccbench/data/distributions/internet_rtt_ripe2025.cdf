# Internet round-trip times (ms) of RIPE Atlas pings, binned for per-flow RTTs: each
# line's value is a bin's upper edge and its cumulative share of pings up to it (read as
# bins: that share of flows gets that RTT; docs/traffic.md).
# Derived from input-output-hk/ouroboros-leios, data/internet/country_rtt_stat.csv.gz at
# commit 73c3b6b49cec325a871617c4242ee7c6b13bae4d ("Latency map of the internet",
# data/internet/ReadMe.md): 2.63e9 IPv4 pings of the RIPE Atlas daily dumps of
# 2025-03-29..31 and 2025-04-18..19, grouped by the source's and destination's country
# (iptoasn.com); per country pair the mean RTT and the ping count. Each pair's pings are
# put in the bin of its mean RTT (so the spread within a pair is lost, and the few pings
# whose pair mean is above 600 ms, 8e-7 of them, are in the last bin). The repository has
# no top-level licence; the data are RIPE Atlas measurements, which RIPE NCC makes
# public. Not the dissertation's RIPE Atlas distribution (26.82 % at <= 10 ms, the rest
# unpublished): country-pair means put only 0.15 % there.
# Columns: rtt_ms cumulative.
10 0.001520
20 0.005137
30 0.031317
40 0.066250
50 0.122094
60 0.346912
70 0.396912
80 0.456247
90 0.493484
100 0.508129
110 0.561564
120 0.675380
130 0.725841
140 0.761818
150 0.784380
160 0.797467
170 0.820618
180 0.837715
190 0.872197
200 0.898884
210 0.923760
220 0.937652
230 0.945343
240 0.955252
250 0.962804
260 0.968502
270 0.977157
280 0.983681
290 0.986648
300 0.989801
350 0.997524
400 0.999689
500 0.999999
600 1
