# Sourced by the benchmarks: a TCP port free on 127.0.0.1 right now, chosen by the kernel. A random
# number in 20000-40000 could land in the ephemeral range (32768 and up here), where wrk's and curl's
# own connections take ports, and the server then failed with "Address already in use".
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
