package shard_test

import (
	"bufio"
	"bytes"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// keysElems splits a raw aggregate reply into its header and raw elements.
func keysElems(t *testing.T, raw string) (string, []string) {
	t.Helper()
	r := bufio.NewReader(bytes.NewBufferString(raw))
	head, err := r.ReadString('\n')
	require.NoError(t, err)
	n, err := strconv.Atoi(head[1 : len(head)-2])
	require.NoError(t, err, raw)
	var els []string
	for i := 0; i < n; i++ {
		el, err := nodetest.ReadReply(r)
		require.NoError(t, err)
		els = append(els, el)
	}
	return head, els
}

// keysSorted returns an aggregate reply with its elements sorted, for
// replies whose order is unspecified (KEYS).
func keysSorted(t *testing.T, raw string) string {
	head, els := keysElems(t, raw)
	sort.Strings(els)
	return head + keysJoin(els)
}

func keysJoin(s []string) string {
	var b bytes.Buffer
	for _, x := range s {
		b.WriteString(x)
	}
	return b.String()
}

// keysBulk decodes a raw bulk string reply.
func keysBulk(t *testing.T, raw string) string {
	t.Helper()
	r := bufio.NewReader(bytes.NewBufferString(raw))
	head, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, byte('$'), head[0], raw)
	n, _ := strconv.Atoi(head[1 : len(head)-2])
	return raw[len(head) : len(head)+n]
}

// keysScanAll iterates SCAN (with extra options) to the end and returns
// every reported key with its multiplicity, checking each reply's shape.
func keysScanAll(t *testing.T, kc *respConn, opts ...string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cursor := "0"
	for i := 0; ; i++ {
		require.Less(t, i, 1_000_000, "scan does not terminate")
		raw := kc.Do(append([]string{"SCAN", cursor}, opts...)...)
		head, els := keysElems(t, raw)
		require.Equal(t, "*2\r\n", head, raw)
		cursor = keysBulk(t, els[0])
		ahead, keys := keysElems(t, els[1])
		require.Equal(t, byte('*'), ahead[0])
		for _, k := range keys {
			seen[keysBulk(t, k)]++
		}
		if cursor == "0" {
			return seen
		}
	}
}
