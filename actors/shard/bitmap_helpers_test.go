package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// bitSameAsRedis sends script to a real redis-server and to slotd (both
// started with directives), in RESP2 and RESP3, and requires byte-identical
// replies. Keys carry the hash tag {t}, rewritten per protocol so each run
// starts from empty keys.
func bitSameAsRedis(t *testing.T, script [][]string, directives ...string) {
	t.Helper()
	ref := nodetest.StartRedis(t, directives...)
	var opts []string
	for i := 0; i+1 < len(directives); i += 2 {
		opts = append(opts, strings.TrimPrefix(directives[i], "--"), directives[i+1])
	}
	n := shardsNode(t, opts...)
	// A script that changes server configuration (CONFIG SET) must not run
	// beside its other-protocol twin: both share the two servers.
	serial := false
	for _, cmd := range script {
		serial = serial || strings.EqualFold(cmd[0], "config")
	}
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			if !serial {
				t.Parallel()
			}
			want := respDial(t, ref, proto)
			got := respDial(t, n.Addr, proto)
			tag := fmt.Sprintf("{t%d}", proto)
			for _, cmd := range script {
				args := make([]string, len(cmd))
				for i, a := range cmd {
					args[i] = strings.ReplaceAll(a, "{t}", tag)
				}
				w, g := want.Do(args...), got.Do(args...)
				if !assert.Equal(t, w, g, "reply to %q", bitShort(args)) {
					return // later replies depend on this one
				}
			}
		})
	}
}

// bitShort abbreviates long argument lists for failure messages.
func bitShort(args []string) []string {
	if len(args) <= 8 {
		return args
	}
	return append(append([]string{}, args[:8]...), fmt.Sprintf("... (%d args)", len(args)))
}
