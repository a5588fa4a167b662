"""R1: a bare CR inside one JSON line (valid JSON white space) is relayed as read; a client that
ends lines at CR too (Node's readline, Python's universal newlines: `text=True` pipes) reads a
second, unchecked tools/list response whose description hides TAG characters.

Run: .venv/bin/python review2/r1_cr_smuggling.py   (exit 1: broken, 0: held)"""
import json, os, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", ".venv", "bin", "conduit-mcp")
proc = subprocess.Popen(
    [BIN, "proxy", "--server-id", "cr", "--", sys.executable, os.path.join(HERE, "cr_server.py")],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # text=True: universal newlines
def send(m):
    proc.stdin.write(json.dumps(m) + "\n"); proc.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
proc.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
first = None
for _ in range(6):
    line = proc.stdout.readline()
    try:
        m = json.loads(line)
    except ValueError:
        continue  # a fragment: a client's parser drops it
    if m.get("id") == 2:
        first = m
        break
proc.kill()
desc = first["result"]["tools"][0]["description"]
hidden = any(0xE0000 <= ord(c) <= 0xE007F for c in desc)
print("client took as the tools/list response:", ascii(desc)[:120])
print("BROKEN: unchecked listing reached the client" if hidden else "held")
sys.exit(1 if hidden else 0)
