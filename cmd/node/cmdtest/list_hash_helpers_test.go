package cmdtest_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lhPairsSorted sorts a flat field/value reply (HGETALL) by pairs.
func lhPairsSorted(t *testing.T, raw string) string {
	if raw[0] == '-' {
		return raw
	}
	head, els := respElems(t, raw)
	var pairs []string
	for i := 0; i+1 < len(els); i += 2 {
		pairs = append(pairs, els[i]+els[i+1])
	}
	sort.Strings(pairs)
	return head + strings.Join(pairs, "")
}

// lhShape reduces a reply to its type and size: the header line and each
// element's first byte (random replies are compared this way).
func lhShape(t *testing.T, raw string) string {
	switch raw[0] {
	case '*', '~', '%':
		head, els := respElems(t, raw)
		var b strings.Builder
		b.WriteString(head)
		for _, el := range els {
			b.WriteString(lhShape(t, el))
		}
		return b.String()
	case '$':
		return "$"
	}
	return raw
}

// lhScanAll runs HSCAN key to the end and returns every field with its
// value, checking each step's shape.
func lhScanAll(t *testing.T, lc *respConn, key string, opts ...string) map[string]string {
	t.Helper()
	steps, errReply := respScan(t, lc, []string{"HSCAN", key}, opts...)
	require.Empty(t, errReply)
	out := map[string]string{}
	for _, kv := range steps {
		require.Zero(t, len(kv)%2)
		for j := 0; j < len(kv); j += 2 {
			out[kv[j]] = kv[j+1]
		}
	}
	return out
}
