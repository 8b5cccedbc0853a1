# Sourced by the benchmarks: a TCP port free on 127.0.0.1 right now, chosen by the kernel (it stays
# free until the server binds it unless another program takes it in between). A random number in
# 20000-40000 could be a port in use, one of wrk's or curl's own connections' (the ephemeral range
# starts at 32768 here), and the server then failed with "Address already in use".
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
