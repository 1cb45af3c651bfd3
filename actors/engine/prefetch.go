package engine

import "github.com/slotd/slotd/netio/batch"

// prefetchChunk is how many commands of a batch are prefetched at once: the
// cache lines of a chunk stay warm until its commands have run.
const prefetchChunk = 16

// prefetch warms the cache for the first keys of the next commands of a
// batch (keyspace.Index.Prefetch), so that a pipelined read of GETs pays its
// cache misses overlapped instead of one command after another. Single
// commands are left alone: there is nothing to overlap.
func (s *Shard) prefetch(b *batch.Batch, from int) {
	cmds := b.Cmds[from:]
	if len(cmds) < 2 || s.index == nil || s.index.Len() == 0 {
		return
	}
	var keys [prefetchChunk][]byte
	n := 0
	for i := range min(len(cmds), prefetchChunk) {
		c := &cmds[i]
		if c.Spec != nil && c.Spec.First > 0 && c.Spec.First < len(c.Args) {
			keys[n] = c.Args[c.Spec.First]
			n++
		}
	}
	if n > 1 {
		b.Warm += s.index.Prefetch(keys[:n])
	}
}
