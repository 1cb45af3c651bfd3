package shard_test

import (
	"bufio"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// lhElems splits an aggregate reply into its header line and raw elements
// (a map's keys and values alternate).
func lhElems(t *testing.T, raw string) (string, []string) {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(raw))
	head, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, "*~%", head[:1], "not an aggregate: %q", raw)
	n, err := strconv.Atoi(head[1 : len(head)-2])
	require.NoError(t, err, raw)
	if head[0] == '%' {
		n *= 2
	}
	var els []string
	for i := 0; i < n; i++ {
		el, err := nodetest.ReadReply(r)
		require.NoError(t, err)
		els = append(els, el)
	}
	return head, els
}

// lhSorted returns an aggregate reply with its elements sorted (for
// replies whose order Redis leaves unspecified); errors pass through.
func lhSorted(t *testing.T, raw string) string {
	if raw[0] == '-' {
		return raw
	}
	head, els := lhElems(t, raw)
	sort.Strings(els)
	return head + strings.Join(els, "")
}

// lhPairsSorted sorts a flat field/value reply (HGETALL) by pairs.
func lhPairsSorted(t *testing.T, raw string) string {
	if raw[0] == '-' {
		return raw
	}
	head, els := lhElems(t, raw)
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
		head, els := lhElems(t, raw)
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

// lhBulk decodes a bulk reply.
func lhBulk(t *testing.T, raw string) string {
	t.Helper()
	require.Equal(t, byte('$'), raw[0], raw)
	i := strings.Index(raw, "\r\n")
	n, err := strconv.Atoi(raw[1:i])
	require.NoError(t, err)
	return raw[i+2 : i+2+n]
}

// lhScanAll runs HSCAN key to the end and returns every field with its
// value, checking each step's shape.
func lhScanAll(t *testing.T, lc *respConn, key string, opts ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	cursor := "0"
	for i := 0; ; i++ {
		require.Less(t, i, 100000, "HSCAN does not terminate")
		raw := lc.Do(append([]string{"HSCAN", key, cursor}, opts...)...)
		head, els := lhElems(t, raw)
		require.Equal(t, "*2\r\n", head, raw)
		cursor = lhBulk(t, els[0])
		ahead, kv := lhElems(t, els[1])
		require.Equal(t, byte('*'), ahead[0])
		require.Zero(t, len(kv)%2)
		for j := 0; j < len(kv); j += 2 {
			out[lhBulk(t, kv[j])] = lhBulk(t, kv[j+1])
		}
		if cursor == "0" {
			return out
		}
	}
}

// lhWords splits a script line into arguments: a word made of two single
// quotes is an empty argument, and \0 inside a word is a NUL byte.
func lhWords(line string) []string {
	var args []string
	for _, w := range strings.Fields(line) {
		if w == "''" {
			w = ""
		}
		w = strings.ReplaceAll(w, `\0`, "\x00")
		args = append(args, w)
	}
	return args
}
