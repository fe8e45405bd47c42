# Web search flow sizes (bytes), from the DCTCP paper: Alizadeh et al., "Data Center
# TCP (DCTCP)", SIGCOMM 2010, Fig. 4 (production web-search cluster).
# Points as distributed with the HPCC simulator (alibaba-edu/High-Precision-Congestion-Control,
# traffic_gen/WebSearch_distribution.txt); cumulative probability in percent.
# Columns: size_bytes cumulative; linear interpolation between points.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
