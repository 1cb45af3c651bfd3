"""A redis-py consumer-group worker for stream_workers_test.go.

usage: stream_worker.py PORT STREAM GROUP CONSUMER CRASH_AFTER_BATCHES

Reads with XREADGROUP BLOCK, acknowledges each entry with XACK and prints
the ID of every entry whose XACK returned 1 (it processed that entry).
Every few batches it claims entries idle for over a second with
XAUTOCLAIM. With CRASH_AFTER_BATCHES > 0 it exits abruptly after reading
that batch, without acknowledging it. It stops after two empty reads in a
row once it has seen "DONE" in the stream's control key.
"""
import os
import sys

import redis

port, stream, group, consumer, crash = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
r = redis.Redis(host="127.0.0.1", port=int(port))
out = sys.stdout
batches = 0
empty = 0


def process(entries):
    for entry_id, _fields in entries:
        if r.xack(stream, group, entry_id) == 1:
            out.write(entry_id.decode() + "\n")
    out.flush()


while True:
    res = r.xreadgroup(group, consumer, {stream: ">"}, count=50, block=100)
    batches += 1
    if crash and batches == crash:
        os._exit(0)  # the entries just read stay pending
    entries = res[0][1] if res else []
    process(entries)
    if batches % 5 == 0:
        cursor = "0-0"
        while True:
            cursor, claimed, _deleted = r.xautoclaim(stream, group, consumer, 1000, cursor, count=100)
            process(claimed)
            if cursor in (b"0-0", "0-0"):
                break
    if entries:
        empty = 0
        continue
    empty += 1
    if empty >= 2 and r.get(stream + ":done") == b"1" and r.xpending(stream, group)["pending"] == 0:
        break
