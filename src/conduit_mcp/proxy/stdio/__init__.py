"""The stdio proxy: the client speaks to our stdin/stdout, the server is our child process (or a
Streamable HTTP server, `--upstream`).

Not a public package (`conduit_mcp.proxy.run_stdio` is). `_run.py`: `run_stdio`, both sides
wired through the guard, signals, exit code. `_relay.py`: the line relay between the client and
a child server (each line parsed once, passed as read). `_framing.py`: a byte stream cut into
lines, memory bounded. `_child.py`: the server as a child process (its writer, its reader, its
shutdown), also each session's upstream for the HTTP listener (`listen/`).
"""
