"""The transport edge: websocket sessions, batched writes, connections, peers by address, the seatless gate."""
