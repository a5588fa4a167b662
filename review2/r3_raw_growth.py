"""R3: the proxy's table of raw tool definitions (`GuardSeam._raw`, kept for the approval hint)
grows with every tool name a server has ever listed: a server that lists fresh names at each
re-listing makes the proxy's memory grow with the session's history (the guard's own table
forgets names missing from a complete listing; this one never does).

Run: .venv/bin/python review2/r3_raw_growth.py   (exit 1: broken, 0: held)"""
import sys
import anyio
sys.path.insert(0, "src")
from conduit_mcp.proxy import GuardSeam, GuardSettings

async def main() -> int:
    seam = GuardSeam(GuardSettings(server_id="grow"))
    async def write(_m):  # the proxy's own requests: none expected
        pass
    link = seam.connect(write)
    await link.from_client({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    await link.from_server({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
    rounds, per = 200, 50
    for r in range(rounds):
        rid = r + 1
        await link.from_client({"jsonrpc": "2.0", "id": rid, "method": "tools/list"})
        tools = [{"name": f"t{r}_{i}", "description": "x" * 1000,
                  "inputSchema": {"type": "object"}} for i in range(per)]
        await link.from_server({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    known = len(seam.guard.engine().shared.book.tools) if hasattr(seam.guard, "engine") else "?"
    print(f"after {rounds} listings of {per} fresh tools each: seam._raw holds {len(seam._raw)} "
          f"definitions (the latest listing has {per})")
    seam.close()
    return 1 if len(seam._raw) > 2 * per else 0  # the guard's tools and one page

rc = anyio.run(main)
print("BROKEN: grows with the session's history" if rc else "held")
sys.exit(rc)
