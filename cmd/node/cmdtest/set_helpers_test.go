package cmdtest_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// Helpers of the set and sorted-set tests (prefix sz).

// V sends one command and returns its parsed reply.
func (rc *respConn) V(args ...string) *szVal { return szParse(rc.t, rc.Do(args...)) }

// szVal is a parsed reply.
type szVal struct {
	t    byte   // the RESP type byte
	s    string // scalar text or bulk contents
	null bool   // $-1 or *-1
	kids []*szVal
}

func szRead(r *bufio.Reader) (*szVal, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("short line %q", line)
	}
	v := &szVal{t: line[0], s: line[1 : len(line)-2]}
	switch v.t {
	case '$', '=', '!':
		n, err := strconv.Atoi(v.s)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			v.null, v.s = true, ""
			return v, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		v.s = string(buf[:n])
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(v.s)
		if err != nil {
			return nil, err
		}
		v.s = ""
		if n < 0 {
			v.null = true
			return v, nil
		}
		if v.t == '%' || v.t == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			k, err := szRead(r)
			if err != nil {
				return nil, err
			}
			v.kids = append(v.kids, k)
		}
	}
	return v, nil
}

func szParse(t *testing.T, raw string) *szVal {
	t.Helper()
	v, err := szRead(bufio.NewReader(strings.NewReader(raw)))
	require.NoError(t, err, "parsing %q", raw)
	return v
}

// raw re-encodes v.
func (v *szVal) raw() string {
	switch v.t {
	case '$', '=', '!':
		if v.null {
			return "$-1\r\n"
		}
		return string(v.t) + strconv.Itoa(len(v.s)) + "\r\n" + v.s + "\r\n"
	case '*', '~', '>', '%', '|':
		if v.null {
			return string(v.t) + "-1\r\n"
		}
		n := len(v.kids)
		if v.t == '%' || v.t == '|' {
			n /= 2
		}
		var b strings.Builder
		b.WriteString(string(v.t) + strconv.Itoa(n) + "\r\n")
		for _, k := range v.kids {
			b.WriteString(k.raw())
		}
		return b.String()
	}
	return string(v.t) + v.s + "\r\n"
}

// strs returns the texts of an aggregate's scalar elements.
func (v *szVal) strs() []string {
	out := make([]string, len(v.kids))
	for i, k := range v.kids {
		out[i] = k.s
	}
	return out
}

// sorted re-encodes v with its top-level elements in sorted order (for
// replies whose order is a hashtable's).
func (v *szVal) sorted() string {
	if v.kids == nil {
		return v.raw()
	}
	raws := make([]string, len(v.kids))
	for i, k := range v.kids {
		raws[i] = k.raw()
	}
	sort.Strings(raws)
	n := len(raws)
	if v.t == '%' {
		n /= 2
	}
	return string(v.t) + strconv.Itoa(n) + "\r\n" + strings.Join(raws, "")
}

// shape describes v's types and sizes but not its contents (random
// replies).
func (v *szVal) shape() string {
	switch {
	case v.null:
		return string(v.t) + "null"
	case v.t == '-':
		return v.raw()
	case v.kids != nil || v.t == '*' || v.t == '~' || v.t == '%':
		parts := make([]string, len(v.kids))
		for i, k := range v.kids {
			parts[i] = k.shape()
		}
		return string(v.t) + strconv.Itoa(len(v.kids)) + "[" + strings.Join(parts, " ") + "]"
	}
	return string(v.t)
}

// szScanAll runs a full SSCAN/ZSCAN iteration and returns what it saw:
// members for SSCAN, member→score for ZSCAN.
func szScanAll(t *testing.T, sc *respConn, cmd, key string, opts ...string) map[string]string {
	t.Helper()
	steps, errReply := respScan(t, sc, []string{cmd, key}, opts...)
	if errReply != "" {
		return map[string]string{"error": errReply}
	}
	seen := map[string]string{}
	for _, items := range steps {
		if strings.EqualFold(cmd, "zscan") {
			require.Equal(t, 0, len(items)%2)
			for j := 0; j < len(items); j += 2 {
				seen[items[j]] = items[j+1]
			}
		} else {
			for _, m := range items {
				seen[m] = ""
			}
		}
	}
	return seen
}

// szSeed returns the seed and length of a random differential run: the
// defaults, or SZ_SEED / SZ_OPS from the environment to explore more.
func szSeed(seed uint64, ops int) (uint64, int) {
	if v, err := strconv.ParseUint(os.Getenv("SZ_SEED"), 10, 64); err == nil {
		seed = v
	}
	if v, err := strconv.Atoi(os.Getenv("SZ_OPS")); err == nil {
		ops = v
	}
	return seed, ops
}

// szRun sends one script line to a real redis-server (rc) and to slotd (sc)
// and compares the replies. A line may start with a mode: "sorted "
// compares with the top-level elements sorted (hashtable order), "shape "
// only the reply's types and sizes (random replies), "scan " runs a whole
// SSCAN/ZSCAN iteration on both and compares what was seen. It reports
// whether the replies agreed.
func szRun(t *testing.T, rc, sc *respConn, line string) bool {
	t.Helper()
	ok, _ := szRunV(t, rc, sc, line)
	return ok
}

// szRunV is szRun also returning slotd's reply type ('-' for an error; 0
// for a scan line).
func szRunV(t *testing.T, rc, sc *respConn, line string) (bool, byte) {
	t.Helper()
	mode := ""
	for _, m := range []string{"sorted ", "shape ", "scan "} {
		if strings.HasPrefix(line, m) {
			mode, line = m, line[len(m):]
		}
	}
	args := scriptWords(line)
	if mode == "scan " {
		return assert.Equal(t, szScanAll(t, rc, args[0], args[1], args[2:]...),
			szScanAll(t, sc, args[0], args[1], args[2:]...), line), 0
	}
	want, got := rc.V(args...), sc.V(args...)
	switch mode {
	case "sorted ":
		return assert.Equal(t, want.sorted(), got.sorted(), line), got.t
	case "shape ":
		return assert.Equal(t, want.shape(), got.shape(), line), got.t
	}
	return assert.Equal(t, want.raw(), got.raw(), line), got.t
}

// szRandomRun plays ops random script lines from gen (which may look at the
// reference server) against a real redis-server (raddr) and slotd (addr), in
// RESP2 then RESP3, comparing every reply and, after each line, the lines
// after(k) of every key. Most generated commands must be valid.
func szRandomRun(t *testing.T, raddr, addr string, ops int, gen func(rc *respConn) string, keys []string,
	after func(k string) []string) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		rc, sc := respDial(t, raddr, proto), respDial(t, addr, proto)
		rc.Do("FLUSHALL")
		sc.Do("FLUSHALL")
		var history []string
		errs := 0
		for i := 0; i < ops; i++ {
			line := gen(rc)
			history = append(history, line)
			ok, typ := szRunV(t, rc, sc, line)
			if typ == '-' {
				errs++
			}
			for _, k := range keys {
				for _, check := range after(k) {
					ok = ok && szRun(t, rc, sc, check)
				}
			}
			require.True(t, ok, "after:\n%s", strings.Join(history[max(0, len(history)-10):], "\n"))
		}
		t.Logf("RESP%d: %d of %d commands answered with an error", proto, errs, len(history))
		require.Less(t, errs, len(history)/4, "the random commands should mostly be valid")
	}
}

// szSameAsRedis replays script lines (see szRun; \x00 stands for a NUL
// byte) against a real redis-server and slotd, in RESP2 then RESP3.
func szSameAsRedis(t *testing.T, lines []string) {
	t.Helper()
	raddr := nodetest.StartRedis(t)
	n := shardsNode(t)
	for _, proto := range []int{2, 3} {
		rc, sc := respDial(t, raddr, proto), respDial(t, n.Addr, proto)
		rc.Do("FLUSHALL")
		sc.Do("FLUSHALL")
		for _, line := range lines {
			szRun(t, rc, sc, strings.ReplaceAll(line, `\x00`, "\x00"))
		}
	}
}
