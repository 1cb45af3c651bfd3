package repl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// TestTraceLinksWriteToReplicaApply: with tracing on, a SET's shard record
// on the primary and the replica's apply of the stream frame it wrote have
// one trace id (trace.StreamTrace), the apply after the write in clock
// order. Both nodes run in this process, so they share one ring.
func TestTraceLinksWriteToReplicaApply(t *testing.T) {
	p := start(t, 2, "trace-actors", "all")
	r := start(t, 2, "trace-actors", "all")
	defer trace.Configure("")
	replicate(t, r, p)
	require.NoError(t, p.Client(t).Set(ctx, "traced-key", "v", 0).Err())
	var write, apply trace.Record
	nodetest.Eventually(t, 10*time.Second, func() bool {
		write, apply = trace.Record{}, trace.Record{}
		recs := trace.Recent(0)
		for _, rec := range recs {
			if rec.Kind == "shard" && strings.HasPrefix(rec.Message, "SET slot=") && rec.TraceID>>63 == 1 {
				write = rec
				break
			}
		}
		if write.TraceID == 0 {
			return false
		}
		for _, rec := range recs {
			if rec.Kind == "repl" && rec.TraceID == write.TraceID && strings.HasPrefix(rec.Message, "apply S from ") {
				apply = rec
				return true
			}
		}
		return false
	}, "the SET's record and the replica's apply under one trace id")
	require.Less(t, write.Clock, apply.Clock, "the apply after the write: %v / %v", write, apply)
}
