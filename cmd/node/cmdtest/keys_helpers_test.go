package cmdtest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// keysScanAll iterates SCAN (with extra options) to the end and returns
// every reported key with its multiplicity, checking each reply's shape.
func keysScanAll(t *testing.T, kc *respConn, opts ...string) map[string]int {
	t.Helper()
	steps, errReply := respScan(t, kc, []string{"SCAN"}, opts...)
	require.Empty(t, errReply)
	seen := map[string]int{}
	for _, keys := range steps {
		for _, k := range keys {
			seen[k]++
		}
	}
	return seen
}
